// A session's capacity class over HTTP (docs/dev/fair-share.md): guaranteed by default and bounded by the
// organization's and project's guarantee; borrowed by opt-in, bounded by the borrowing limit, priced at the
// offering's borrowed multiplier, shown with its reclaim notice on create, detail and list, and in the
// cost preview. Real API and Postgres; the management cluster is a stand-in (catalog + Session writes).
import { OfferingKind, ResourcePolicyKind, resourcePath, sessionPath } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aGpuCluster } from "../../db/operations/sessions/sessions.test-support.ts";
import { FakeManagementCluster } from "../../domain/credits/fakes.test-support.ts";
import {
  type IdentityTestApi,
  startIdentityTestApi,
  type TestUser,
} from "../../domain/identity/identity.test-support.ts";
import { makeSessionsRuntime } from "../../domain/sessions/runtime.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";

describe("a session's capacity class", () => {
  let t: IdentityTestApi;
  let kube: FakeManagementCluster;
  let member: TestUser;
  let researcher: TestUser;
  let outsider: TestUser;
  let superAdmin: TestUser;
  let orgId: string;
  let projectId: string;

  beforeAll(async () => {
    kube = new FakeManagementCluster();
    t = await startIdentityTestApi({ sessions: makeSessionsRuntime(kube) });
    kube.objects.set(
      resourcePath(OfferingKind, { name: "h100" }),
      OfferingKind.build(
        { name: "h100" },
        {
          displayName: "H100",
          gpuModel: H100,
          tier: "premium",
          hourlyCreditRate: "4000000",
          borrowedRatePermille: 300,
        },
      ),
    );
    superAdmin = await t.aUser({ superAdmin: true });
    member = await t.aUser();
    researcher = await t.aUser();
    outsider = await t.aUser();
    orgId = (await t.anOrganization("Landlord")).id;
    projectId = (await t.aProject(orgId, "Vision")).id;
    await t.member(member, orgId, null, "member");
    await t.member(researcher, orgId, projectId, "member");
    kube.policies.push(
      ResourcePolicyKind.build(
        { name: "landlord" },
        {
          scope: { kind: "organization", id: orgId },
          fairShare: {
            guarantees: [{ gpuModel: H100, gpus: 2, borrowingLimit: 2 }],
            reclaimGraceSeconds: 120,
            minRuntimeSeconds: 300,
          },
        },
      ),
      ResourcePolicyKind.build(
        { name: "vision" },
        { scope: { kind: "project", id: projectId }, fairShare: { guarantees: [{ gpuModel: H100, gpus: 1 }] } },
      ),
    );
    await aGpuCluster(t.database.db, "clu_landlord", 8);
    // Credits for every minimum run the tests ask for.
    const wallet = await t.request("POST", "/api/v1/credits/wallets", {
      token: superAdmin.token,
      json: { organization_id: orgId, owner_kind: "organization" },
    });
    expect(wallet.status, JSON.stringify(wallet.body)).toBe(201);
    const grant = await t.request("POST", "/api/v1/credits/allocations", {
      token: superAdmin.token,
      json: { from_wallet_id: "wal_system", to_wallet_id: wallet.body.id, amount: "100000000", reason: "tests" },
    });
    expect(grant.status).toBe(201);
  });
  afterAll(async () => {
    await t?.stop();
  });

  let keys = 0;
  const create = (user: TestUser, json: Record<string, unknown> = {}) =>
    t.request("POST", "/api/v1/sessions", {
      token: user.token,
      json: { offering: "h100", preset: "gpu-small", image: "jupyterlab", ...json },
      headers: { "Idempotency-Key": `class-${keys++}` },
    });

  it("makes a session guaranteed by default, at the full rate, with no reclaim notice", async () => {
    const c = await create(member);
    expect(c.status, JSON.stringify(c.body)).toBe(201);
    expect(c.body).toMatchObject({ capacity_class: "guaranteed", rate_multiplier: 1, reclaim_notice: null });
    const got = await t.request("GET", `/api/v1/sessions/${c.body.id}`, { token: member.token });
    expect(got.body).toMatchObject({ capacity_class: "guaranteed", reclaim_notice: null });
  });

  it("keeps a project's guaranteed sessions within the project's guarantee and says how to borrow", async () => {
    expect((await create(researcher, { project_id: projectId })).status).toBe(201);
    const over = await create(researcher, { project_id: projectId });
    expect(over.status).toBe(403);
    expect(over.body.error).toMatchObject({
      code: "quota_exceeded",
      details: { limit: "guaranteed_gpus", value: 1, current: 1, requested: 1, scope: `project ${projectId}` },
    });
    expect(over.body.error.message).toContain('capacity_class "borrowed"');
  });

  it("refuses a guaranteed session beyond the organization's guarantee (two of two in use)", async () => {
    const over = await create(member);
    expect(over.status).toBe(403);
    expect(over.body.error.details).toMatchObject({ limit: "guaranteed_gpus", value: 2, current: 2 });
  });

  it("lets a person opt in to borrowing: borrowed, 0.3 of the rate, with its reclaim notice in create, detail and list", async () => {
    const c = await create(member, { capacity_class: "borrowed" });
    expect(c.status, JSON.stringify(c.body)).toBe(201);
    expect(c.body).toMatchObject({
      capacity_class: "borrowed",
      rate_multiplier: 0.3,
      reclaim_notice: { message: expect.stringContaining("guaranteed session"), pending: null },
    });
    const got = await t.request("GET", `/api/v1/sessions/${c.body.id}`, { token: member.token });
    expect(got.body).toMatchObject({ capacity_class: "borrowed", rate_multiplier: 0.3 });
    const list = await t.request("GET", "/api/v1/sessions?scope=mine", { token: member.token });
    const mine = list.body.data.find((s: { id: string }) => s.id === c.body.id);
    expect(mine).toMatchObject({ capacity_class: "borrowed", reclaim_notice: { pending: null } });
    const row = await t.database.db("sessions").where({ id: c.body.id }).first("capacity_class", "rate_permille");
    expect(row).toEqual({ capacity_class: "borrowed", rate_permille: 300 });
    const cr = kube.objects.get(sessionPath(c.body.namespace, c.body.resource_name)) as
      | { spec: { capacityClass: string } }
      | undefined;
    expect(cr?.spec.capacityClass).toBe("borrowed");
  });

  it("stops borrowing at the organization's borrowing limit", async () => {
    expect((await create(member, { capacity_class: "borrowed" })).status).toBe(201);
    const over = await create(member, { capacity_class: "borrowed" });
    expect(over.status).toBe(403);
    expect(over.body.error.details).toMatchObject({ limit: "borrowing_limit_gpus", value: 2, current: 2 });
  });

  it("prices both classes in the preview and names the reclaim terms of borrowing", async () => {
    const g = await t.request("POST", "/api/v1/sessions/preview-cost", {
      token: member.token,
      json: { offering: "h100" },
    });
    expect(g.body).toMatchObject({
      capacity_class: "guaranteed",
      rate_multiplier: 1,
      hourly_rate: "4000000",
      full_hourly_rate: "4000000",
      reclaim_terms: null,
    });
    const b = await t.request("POST", "/api/v1/sessions/preview-cost", {
      token: member.token,
      json: { offering: "h100", capacity_class: "borrowed" },
    });
    expect(b.body).toMatchObject({
      capacity_class: "borrowed",
      rate_multiplier: 0.3,
      hourly_rate: "1200000",
      full_hourly_rate: "4000000",
      reclaim_terms: { grace_seconds: 120, min_runtime_seconds: 300 },
      can_start: false,
      refusal: { code: "quota_exceeded", details: { limit: "borrowing_limit_gpus" } },
    });
  });

  it("answers a class it does not know with 400 validation_failed naming the field", async () => {
    for (const path of ["/api/v1/sessions", "/api/v1/sessions/preview-cost"]) {
      const r = await t.request("POST", path, {
        token: member.token,
        json: { offering: "h100", preset: "gpu-small", image: "jupyterlab", capacity_class: "spot" },
        headers: { "Idempotency-Key": `class-bad-${keys++}` },
      });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("validation_failed");
      expect(r.body.error.details.issues).toContainEqual(expect.objectContaining({ path: ["body", "capacity_class"] }));
    }
  });

  it("shows nobody outside the organization a borrowed session", async () => {
    const list = await t.request("GET", "/api/v1/sessions?scope=all", { token: outsider.token });
    expect(list.body.data).toEqual([]);
  });
});
