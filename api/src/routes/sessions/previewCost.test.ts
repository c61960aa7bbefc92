// POST /api/v1/sessions/preview-cost over HTTP with the real API and Postgres: the price at charging's
// rate, and whether the caller could start the session now — answered with the very refusal
// POST /api/v1/sessions gives, for credits, minimum runs already promised, and the resource policy.
// The management cluster is a stand-in (catalog + Session writes).
import { OfferingKind, ResourcePolicyKind, resourcePath } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aGpuCluster } from "../../db/operations/sessions/sessions.test-support.ts";
import { expectLedgerInvariants } from "../../domain/credits/credits.test-support.ts";
import { FakeManagementCluster } from "../../domain/credits/fakes.test-support.ts";
import {
  type IdentityTestApi,
  startIdentityTestApi,
  type TestUser,
} from "../../domain/identity/identity.test-support.ts";
import { makeSessionsRuntime } from "../../domain/sessions/runtime.ts";

const offeringPath = (name: string) => resourcePath(OfferingKind, { name });
const H100 = "NVIDIA-H100-80GB-HBM3";
// Ten minutes of h100 (4 credits/h), rounded up: the door's minimum run.
const TEN_MINUTES = "666667";

describe("previewing a session's cost and whether it could start", () => {
  let t: IdentityTestApi;
  let kube: FakeManagementCluster;
  let member: TestUser;
  let colleague: TestUser;
  let admin: TestUser;
  let superAdmin: TestUser;
  let wanderer: TestUser;
  let orgId: string;
  let otherOrgId: string;
  let projectId: string;

  beforeAll(async () => {
    kube = new FakeManagementCluster();
    t = await startIdentityTestApi({ sessions: makeSessionsRuntime(kube) });
    // A one-GPU preset on a three-GPU offering: a third of its rate, 333,333.3… units an hour.
    kube.objects.set(
      offeringPath("h100x3"),
      OfferingKind.build(
        { name: "h100x3" },
        { displayName: "3 × H100", gpuModel: H100, tier: "premium", hourlyCreditRate: "1000000", gpuCount: 3 },
      ),
    );
    kube.objects.set(
      offeringPath("h100-retired"),
      OfferingKind.build(
        { name: "h100-retired" },
        { displayName: "Old H100", gpuModel: H100, tier: "premium", hourlyCreditRate: "4000000", enabled: false },
      ),
    );
    kube.objects.set(
      offeringPath("b200"),
      OfferingKind.build(
        { name: "b200" },
        { displayName: "B200", gpuModel: "NVIDIA-B200", tier: "premium", hourlyCreditRate: "9000000" },
      ),
    );
    superAdmin = await t.aUser({ superAdmin: true });
    admin = await t.aUser();
    member = await t.aUser();
    colleague = await t.aUser();
    wanderer = await t.aUser();
    orgId = (await t.anOrganization("Preview")).id;
    otherOrgId = (await t.anOrganization("Elsewhere")).id;
    projectId = (await t.aProject(orgId, "Vision")).id;
    await t.member(admin, orgId, null, "org_admin");
    await t.member(member, orgId, null, "member");
    await t.member(colleague, orgId, projectId, "member");
    await t.member(wanderer, orgId, null, "member");
    await t.member(wanderer, otherOrgId, null, "member");
    // Set before the first read: the catalog caches policies for a few seconds.
    kube.policies.push(
      ResourcePolicyKind.build(
        { name: "preview-org" },
        { scope: { kind: "organization", id: orgId }, limits: { maxConcurrentSessionsPerUser: 1 } },
      ),
      ResourcePolicyKind.build(
        { name: "preview-project" },
        { scope: { kind: "project", id: projectId }, limits: { maxGpusPerProject: 1 } },
      ),
    );
    await aGpuCluster(t.database.db, "clu_preview", 8);
  });
  afterAll(async () => {
    await expectLedgerInvariants(t.database.db);
    await t?.stop();
  });

  const preview = (user: TestUser, json: Record<string, unknown>) =>
    t.request("POST", "/api/v1/sessions/preview-cost", { token: user.token, json });
  let keys = 0;
  const create = (user: TestUser, json: Record<string, unknown> = {}) =>
    t.request("POST", "/api/v1/sessions", {
      token: user.token,
      json: { offering: "h100", preset: "gpu-small", image: "jupyterlab", ...json },
      headers: { "Idempotency-Key": `preview-${keys++}` },
    });
  /** The error object create answered, as the preview's refusal carries it. */
  const refusalOf = (r: { body: { error: Record<string, unknown> } }) => {
    const { code, message, details } = r.body.error;
    return { code, message, details };
  };

  it("prices a session at charging's exact rate, rounding only the total up to a unit", async () => {
    const r = await preview(member, { offering: "h100x3", preset: "gpu-small", duration_seconds: 36_000 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({
      gpu_count: 1,
      hourly_rate: "333334",
      duration_seconds: 36_000,
      // Ten hours at 333,333.3… units: 3,333,333.3… rounded up once, not ten truncated hours.
      cost: "3333334",
      cost_credits: "3.333334",
    });
  });

  it("says a member whose wallets are empty could not start, with the refusal create answers, and writes nothing", async () => {
    const before = {
      sessions: await t.database.db("sessions").count("* as n").first(),
      ledger: await t.database.db("ledger_transactions").count("* as n").first(),
    };
    const p = await preview(member, { offering: "h100", preset: "gpu-small", duration_seconds: 600 });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ can_start: false, organization_id: orgId, project_id: null, cost: TEN_MINUTES });
    expect(p.body.refusal).toMatchObject({
      code: "quota_exceeded",
      details: { limit: "credits", value: "0", reserved: "0", required: TEN_MINUTES, minimum_run_seconds: 600 },
    });
    expect(await t.database.db("sessions").count("* as n").first()).toEqual(before.sessions);
    expect(await t.database.db("ledger_transactions").count("* as n").first()).toEqual(before.ledger);
    const c = await create(member);
    expect(c.status).toBe(403);
    expect(p.body.refusal).toEqual(refusalOf(c));
  });

  it("says yes once the organization's wallet covers the minimum run, and create agrees", async () => {
    const opened = await t.request("POST", "/api/v1/credits/wallets", {
      token: admin.token,
      json: { organization_id: orgId, owner_kind: "organization" },
    });
    expect(opened.status).toBe(201);
    const grant = await t.request("POST", "/api/v1/credits/allocations", {
      token: superAdmin.token,
      json: { from_wallet_id: "wal_system", to_wallet_id: opened.body.id, amount: "1000000", reason: "preview" },
    });
    expect(grant.status).toBe(201);
    const p = await preview(member, { offering: "h100", preset: "gpu-small" });
    expect(p.body).toMatchObject({ can_start: true, organization_id: orgId });
    expect(p.body.refusal).toBeUndefined();
    expect((await create(member)).status).toBe(201);
  });

  it("counts the minimum run already promised to the session just let in, for a colleague on the same wallet", async () => {
    const p = await preview(wanderer, { offering: "h100", organization_id: orgId });
    expect(p.body).toMatchObject({ can_start: false });
    expect(p.body.refusal).toMatchObject({
      code: "quota_exceeded",
      details: { limit: "credits", value: "1000000", reserved: TEN_MINUTES, required: TEN_MINUTES, sessions_let_in: 1 },
    });
    const c = await create(wanderer, { organization_id: orgId });
    expect(c.status).toBe(403);
    expect(p.body.refusal).toEqual(refusalOf(c));
  });

  it("answers the resource policy's limits as create does: concurrent sessions per user, GPUs per project", async () => {
    const mine = await preview(member, { offering: "h100" });
    expect(mine.body.refusal).toMatchObject({
      code: "quota_exceeded",
      details: {
        limit: "maxConcurrentSessionsPerUser",
        value: 1,
        current: 1,
        requested: 1,
        scope: `organization ${orgId}`,
      },
    });
    expect(mine.body.refusal).toEqual(refusalOf(await create(member)));

    // A session of the project holds its one GPU.
    await t.database.db("sessions").where({ owner_id: member.id }).update({ project_id: projectId });
    const project = await preview(colleague, { offering: "h100", project_id: projectId });
    expect(project.body).toMatchObject({ can_start: false, organization_id: orgId, project_id: projectId });
    expect(project.body.refusal).toMatchObject({
      code: "quota_exceeded",
      details: { limit: "maxGpusPerProject", value: 1, current: 1, requested: 1, scope: `project ${projectId}` },
    });
    expect(project.body.refusal).toEqual(refusalOf(await create(colleague, { project_id: projectId })));
  });

  it("refuses as create does for a disabled offering and a GPU model no cluster has, still giving the price", async () => {
    const retired = await preview(member, { offering: "h100-retired" });
    expect(retired.body).toMatchObject({ can_start: false, hourly_rate: "4000000" });
    expect(retired.body.refusal).toEqual(refusalOf(await create(member, { offering: "h100-retired" })));
    expect(retired.body.refusal).toMatchObject({ code: "validation_failed" });

    const b200 = await preview(member, { offering: "b200" });
    expect(b200.body).toMatchObject({ can_start: false, hourly_rate: "9000000", gpu_available_now: false });
    expect(b200.body.refusal).toMatchObject({ code: "gpu_model_unavailable", details: { gpu_model: "NVIDIA-B200" } });
    expect(b200.body.refusal).toEqual(refusalOf(await create(member, { offering: "b200" })));
  });

  it("prices a session for someone whose organization cannot be told, and says why they could not start it", async () => {
    const r = await preview(wanderer, { offering: "h100" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ can_start: false, organization_id: null, project_id: null, hourly_rate: "4000000" });
    expect(r.body.refusal).toEqual(refusalOf(await create(wanderer)));
    expect(r.body.refusal.details.issues).toEqual([expect.objectContaining({ path: ["body", "organization_id"] })]);
  });

  it("answers bad input with the error envelope", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ offering: "h100", organization_id: otherOrgId }, "organization_id"],
      [{ offering: "h100", project_id: "prj_nope" }, "project_id"],
      [{ offering: "nope" }, "offering"],
      [{ offering: "h100", preset: "nope" }, "preset"],
      [{ offering: "h100", duration_seconds: 0 }, "duration_seconds"],
      [{ offering: "h100", duration_seconds: 1.5 }, "duration_seconds"],
      [{ offering: "h100", organization_id: "" }, "organization_id"],
      [{ offering: "h100", surprise: true }, ""],
    ];
    for (const [json, field] of cases) {
      const r = await preview(member, json);
      expect(r.status, JSON.stringify(json)).toBe(400);
      expect(r.body.error).toMatchObject({
        code: "validation_failed",
        message: expect.any(String),
        request_id: expect.any(String),
        timestamp: expect.any(String),
      });
      if (field)
        expect(r.body.error.details.issues, JSON.stringify(json)).toContainEqual(
          expect.objectContaining({ path: ["body", field] }),
        );
    }
    const anonymous = await t.request("POST", "/api/v1/sessions/preview-cost", { json: { offering: "h100" } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe("unauthenticated");
  });
});
