// GET /api/v1/fair-share, GET /api/v1/fair-share/reclaims and the queue's ETA over HTTP with the real API
// and Postgres (docs/dev/fair-share.md). The management cluster is a stand-in (catalog + Session writes).
import { ResourcePolicyKind } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aGpuCluster } from "../../db/operations/sessions/sessions.test-support.ts";
import { FakeManagementCluster } from "../../domain/credits/fakes.test-support.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  startIdentityTestApi,
  type TestUser,
} from "../../domain/identity/identity.test-support.ts";
import { makeSessionsRuntime } from "../../domain/sessions/runtime.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";

let t: IdentityTestApi;
let w: IdentityWorld;
let kube: FakeManagementCluster;
let borrowedId: string;
let guaranteedId: string;

/** A session row as the worker leaves it: holding a GPU on clu_fair, or waiting. */
async function aSessionRow(
  id: string,
  o: { org: string; project?: string; owner: string; phase: string; cls: string; since: Date },
) {
  await t.database.db("sessions").insert({
    id,
    cr_name: id.replace("_", "-"),
    namespace: `org-${o.org}`,
    owner_id: o.owner,
    organization_id: o.org,
    project_id: o.project ?? null,
    offering: "h100",
    preset: "gpu-small",
    image: "jupyterlab",
    gpu_model: H100,
    gpu_count: 1,
    hourly_credit_rate: "4000000",
    offering_gpu_count: 1,
    cluster_id: o.phase === "Running" ? "clu_fair" : null,
    phase: o.phase,
    desired_state: "Running",
    priority: 0,
    capacity_class: o.cls,
    created_at: o.since,
    updated_at: o.since,
    started_at: o.phase === "Running" ? o.since : null,
    queued_at: o.phase === "Queued" ? o.since : null,
  });
}

beforeAll(async () => {
  kube = new FakeManagementCluster();
  t = await startIdentityTestApi({ sessions: makeSessionsRuntime(kube) });
  w = await anIdentityWorld(t);
  kube.policies.push(
    ResourcePolicyKind.build(
      { name: "fair-a" },
      {
        scope: { kind: "organization", id: w.orgA.id },
        fairShare: { guarantees: [{ gpuModel: H100, gpus: 1 }], weight: 3 },
      },
    ),
    ResourcePolicyKind.build(
      { name: "fair-b" },
      { scope: { kind: "organization", id: w.orgB.id }, fairShare: { guarantees: [{ gpuModel: H100, gpus: 1 }] } },
    ),
  );
  await aGpuCluster(t.database.db, "clu_fair", 2);
  await t.database.db("clusters").where({ id: "clu_fair" }).update({ last_report_at: t.clock.now() });
  const now = t.clock.now().getTime();
  // Org B borrows A's unused guarantee; org A's guaranteed session waits for it.
  borrowedId = "ses_fairborrowed0000001";
  guaranteedId = "ses_fairguaranteed00001";
  await aSessionRow("ses_fairguaranteedb0001", {
    org: w.orgB.id,
    project: w.projectB.id,
    owner: w.memberB.id,
    phase: "Running",
    cls: "guaranteed",
    since: new Date(now - 3_600_000),
  });
  await aSessionRow(borrowedId, {
    org: w.orgB.id,
    project: w.projectB.id,
    owner: w.memberB.id,
    phase: "Running",
    cls: "borrowed",
    since: new Date(now - 1_800_000),
  });
  await aSessionRow(guaranteedId, {
    org: w.orgA.id,
    owner: w.memberA.id,
    phase: "Queued",
    cls: "guaranteed",
    since: new Date(now - 60_000),
  });
  await t.database.db("capacity_reclaims").insert({
    id: "rcl_test1",
    session_id: borrowedId,
    organization_id: w.orgB.id,
    project_id: null,
    owner_id: w.memberB.id,
    for_session_id: guaranteedId,
    for_organization_id: w.orgA.id,
    gpu_model: H100,
    gpus: 1,
    reason: "active, newest",
    noticed_at: new Date(now),
    pause_at: new Date(now + 600_000),
  });
});
afterAll(async () => {
  await t?.stop();
});

const get = (user: TestUser | string, path: string) =>
  t.request("GET", path, { token: typeof user === "string" ? user : user.token });

describe("GET /api/v1/fair-share", () => {
  it("shows a super_admin every organization's guarantee, use, borrowing, lending and shares", async () => {
    const r = await get(w.superAdmin, "/api/v1/fair-share");
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.capacity).toEqual({ [H100]: 2 });
    const a = r.body.organizations.find((o: { id: string }) => o.id === w.orgA.id);
    const b = r.body.organizations.find((o: { id: string }) => o.id === w.orgB.id);
    expect(a).toMatchObject({
      weight: 3,
      fair_share: 0.75,
      models: [{ gpu_model: H100, guaranteed: 1, used: 0, borrowed: 0, lent: 1 }],
    });
    expect(b).toMatchObject({ weight: 1, fair_share: 0.25, usage_share: 1, weighted_share: 4 });
    expect(b.models).toEqual([{ gpu_model: H100, guaranteed: 1, used: 1, borrowed: 1, lent: 0 }]);
    // Decayed usage: an hour and half an hour of one card, barely decayed (half-life 7 days).
    expect(b.decayed_usage_gpu_hours).toBeCloseTo(1.5, 2);
    expect(a.decayed_usage_gpu_hours).toBe(0);
  });

  it("breaks a project down by user: what each holds, their decayed usage and their share of the project", async () => {
    const r = await get(w.adminB, "/api/v1/fair-share");
    const project = r.body.organizations[0].projects.find((p: { id: string }) => p.id === w.projectB.id);
    expect(project.decayed_usage_gpu_hours).toBeCloseTo(1.5, 2);
    expect(project.users).toEqual([
      {
        id: w.memberB.id,
        name: expect.any(String),
        weight: 1,
        fair_share: 1,
        usage_share: 1,
        weighted_share: 1,
        decayed_usage_gpu_hours: expect.closeTo(1.5, 2),
        models: [{ gpu_model: H100, guaranteed: 0, used: 1, borrowed: 1, lent: 0 }],
      },
    ]);
  });

  it("shows an organization admin their organization only, even when asking for another (wrong organization)", async () => {
    const mine = await get(w.adminA, "/api/v1/fair-share");
    expect(mine.body.organizations.map((o: { id: string }) => o.id)).toEqual([w.orgA.id]);
    const other = await get(w.adminA, `/api/v1/fair-share?organization_id=${w.orgB.id}`);
    expect(other.status).toBe(200);
    expect(other.body.organizations).toEqual([]);
  });

  it("shows a member or an outsider no organization (wrong user)", async () => {
    for (const u of [w.memberA, w.outsider])
      expect((await get(u, "/api/v1/fair-share")).body.organizations).toEqual([]);
  });

  it("answers an expired token with 401 token_expired and malformed input with 400 validation_failed", async () => {
    const expired = await get(await t.expiredTokenFor(w.superAdmin.id), "/api/v1/fair-share");
    expect(expired.status).toBe(401);
    expect(expired.body.error.code).toBe("token_expired");
    for (const q of ["surprise=1", "organization_id="]) {
      const bad = await get(w.superAdmin, `/api/v1/fair-share?${q}`);
      expect(bad.status, q).toBe(400);
      expect(bad.body.error.code).toBe("validation_failed");
    }
  });
});

describe("GET /api/v1/fair-share/reclaims", () => {
  it("names who reclaimed what and why, to a super_admin and both organizations' admins", async () => {
    for (const u of [w.superAdmin, w.adminA, w.adminB]) {
      const r = await get(u, "/api/v1/fair-share/reclaims");
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual([
        expect.objectContaining({
          session_id: borrowedId,
          for_session_id: guaranteedId,
          reason: "active, newest",
          paused_at: null,
        }),
      ]);
    }
  });

  it("shows the reclaimed session's owner their own, and nobody else anything (wrong user, wrong organization)", async () => {
    expect((await get(w.memberB, "/api/v1/fair-share/reclaims")).body.data).toHaveLength(1);
    for (const u of [w.memberA, w.outsider, w.projectAdminA])
      expect((await get(u, "/api/v1/fair-share/reclaims")).body.data).toEqual([]);
    const r = await get(w.adminA, `/api/v1/fair-share/reclaims?organization_id=org_elsewhere`);
    expect(r.body.data).toEqual([]);
  });

  it("answers an expired token with 401 and malformed paging with 400", async () => {
    const expired = await get(await t.expiredTokenFor(w.adminA.id), "/api/v1/fair-share/reclaims");
    expect(expired.status).toBe(401);
    expect(expired.body.error.code).toBe("token_expired");
    const bad = await get(w.adminA, "/api/v1/fair-share/reclaims?size=0");
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("validation_failed");
  });
});

describe("the queue's ETA", () => {
  it("gives a waiting session p50/p90 overall and per eligible cluster, as of now, with its reason and words", async () => {
    const r = await get(w.memberA, "/api/v1/queue?scope=mine");
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const entry = r.body.data.find((e: { session: { id: string } }) => e.session.id === guaranteedId);
    expect(entry.eta).toMatchObject({
      as_of: expect.any(String),
      method: expect.stringMatching(/^(simulation|throughput|never)$/),
      reason: expect.any(String),
      message: expect.any(String),
    });
    expect(entry.session.capacity_class).toBe("guaranteed");
    // A finite p90 is never below the p50; an infinite one (null) says what it cannot start while.
    if (entry.eta.p90_minutes !== null) expect(entry.eta.p90_minutes).toBeGreaterThanOrEqual(entry.eta.p50_minutes);
    if (entry.eta.method === "never") expect(entry.eta.message).toContain("cannot start while");
  });
});
