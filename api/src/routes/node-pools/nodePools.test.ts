// Node pools with grants over HTTP against real Postgres: a super_admin groups a cluster's nodes by a label
// and grants the pool; the wizard's availability then shows each caller only what they may use; removing
// a grant warns the owners of sessions running there. Bad input gets the envelope with a stable code.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aGpuCluster } from "../../db/operations/sessions/sessions.test-support.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  startIdentityTestApi,
  type TestUser,
} from "../../domain/identity/identity.test-support.ts";

let t: IdentityTestApi;
let w: IdentityWorld;
const H100 = "NVIDIA-H100-80GB-HBM3";
const BASE = "/api/v1/clusters/clu_np/node-pools";

async function aNode(name: string, gpus: number, labels: Record<string, string>) {
  await t.database.db("cluster_nodes").insert({
    cluster_id: "clu_np",
    name,
    gpu_model: H100,
    gpu_count: gpus,
    gpu_allocatable: gpus,
    gpu_in_use: 0,
    schedulable: true,
    ready: true,
    labels: JSON.stringify(labels),
    observed_at: new Date(),
  });
}

beforeAll(async () => {
  t = await startIdentityTestApi();
  w = await anIdentityWorld(t);
  await aGpuCluster(t.database.db, "clu_np", 2); // node n1, no pool label: open to all
  await aNode("lab-1", 8, { "berth.dev/pool": "research" });
  await aNode("lab-2", 8, { "berth.dev/pool": "research", "example.org/rack": "r7" });
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

const req = (u: TestUser, method: string, path: string, json?: unknown) =>
  t.request(method, path, { token: u.token, ...(json !== undefined ? { json } : {}) });

const freeFor = async (u: TestUser) => {
  const r = await req(u, "GET", "/api/v1/sessions/gpu-availability");
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body.clusters as { cluster_id: string; total: number; nodes: number }[]).find(
    (c) => c.cluster_id === "clu_np",
  );
};

let poolId = "";
let grantId = "";

describe("node pools", () => {
  it("groups the labelled nodes into a pool that is closed until granted", async () => {
    const r = await req(w.superAdmin, "POST", BASE, { name: "research", selector: "berth.dev/pool = research" });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({
      cluster_id: "clu_np",
      name: "research",
      selector: "berth.dev/pool=research",
      label: { key: "berth.dev/pool", values: ["research"] },
      grants: [],
      nodes: ["lab-1", "lab-2"],
    });
    poolId = r.body.id;
    // Nobody is granted: everyone sees only the open node.
    expect(await freeFor(w.memberA)).toMatchObject({ total: 2, nodes: 1 });
    expect(await freeFor(w.superAdmin)).toMatchObject({ total: 2, nodes: 1 });
  });

  it("grants the pool to an organization: its members see its nodes, others do not", async () => {
    const r = await req(w.superAdmin, "POST", `${BASE}/${poolId}/grants`, { organization_id: w.orgA.id });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.grants).toEqual([
      expect.objectContaining({
        grantee_kind: "organization",
        grantee_id: w.orgA.id,
        grantee_name: "Org A",
        grantee_organization_name: null,
      }),
    ]);
    grantId = r.body.grants[0].id;
    expect(await freeFor(w.memberA)).toMatchObject({ total: 18, nodes: 3 });
    expect(await freeFor(w.memberB)).toMatchObject({ total: 2, nodes: 1 });
    const again = await req(w.superAdmin, "POST", `${BASE}/${poolId}/grants`, { organization_id: w.orgA.id });
    expect(again.body.grants).toHaveLength(1);
  });

  it("grants to a project only that project's members", async () => {
    const other = await req(w.superAdmin, "POST", BASE, {
      name: "rack7-teaching",
      selector: "example.org/rack in (r9)",
    });
    expect(other.status, JSON.stringify(other.body)).toBe(201);
    const g = await req(w.superAdmin, "POST", `${BASE}/${other.body.id}/grants`, { project_id: w.projectB.id });
    expect(g.status).toBe(201);
    expect(g.body.grants[0]).toMatchObject({
      grantee_kind: "project",
      grantee_id: w.projectB.id,
      grantee_name: "Project B",
      grantee_organization_name: "Org B",
    });
    expect((await req(w.superAdmin, "DELETE", `${BASE}/${other.body.id}`)).status).toBe(204);
  });

  it("lists the cluster's pools for a super_admin and none for anyone else", async () => {
    const mine = await req(w.superAdmin, "GET", BASE);
    expect(mine.body.data.map((p: { name: string }) => p.name)).toEqual(["research"]);
    const theirs = await req(w.adminA, "GET", BASE);
    expect(theirs.status).toBe(200);
    expect(theirs.body).toMatchObject({ data: [], pagination: { total: 0 } });
  });

  it("warns the owners of running sessions when a grant is removed", async () => {
    await t.database.db("sessions").insert({
      id: "ses_nodepoolwarn0000001",
      cr_name: "ses-nodepoolwarn0000001",
      namespace: "org-a",
      owner_id: w.memberA.id,
      organization_id: w.orgA.id,
      project_id: w.projectA.id,
      display_name: "thesis",
      offering: "h100",
      preset: "gpu-small",
      image: "jupyterlab",
      gpu_model: H100,
      gpu_count: 1,
      hourly_credit_rate: "1.00",
      cluster_id: "clu_np",
      node: "lab-1",
      phase: "Running",
    });
    const r = await req(w.superAdmin, "DELETE", `${BASE}/${poolId}/grants/${grantId}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ grants: [], warned_sessions: ["ses_nodepoolwarn0000001"] });
    const inbox = await req(w.memberA, "GET", "/api/v1/notifications");
    expect(inbox.body.data).toContainEqual(
      expect.objectContaining({
        kind: "session.node_pool_revoked",
        data: expect.objectContaining({ pool_id: poolId }),
      }),
    );
    expect(await freeFor(w.memberA)).toMatchObject({ total: 2, nodes: 1 });
  });

  it("records every change in the audit log", async () => {
    const rows = await t.database.db("audit_log").where("action", "like", "node_pool.%").orderBy("id");
    expect(rows.map((r: { action: string }) => r.action)).toEqual(
      expect.arrayContaining(["node_pool.create", "node_pool.grant", "node_pool.revoke", "node_pool.delete"]),
    );
  });
});

describe("a node pool granted to one user", () => {
  // A PI's own nodes: only sessions she owns go there, not her project colleague's.
  let piPool = "";
  let piGrant = "";

  it("counts the pool in the wizard's availability for that user only", async () => {
    await aNode("pi-1", 4, { "berth.dev/pool": "pi-a" });
    const p = await req(w.superAdmin, "POST", BASE, { name: "pi-a", selector: "berth.dev/pool=pi-a" });
    expect(p.status, JSON.stringify(p.body)).toBe(201);
    piPool = p.body.id;
    const g = await req(w.superAdmin, "POST", `${BASE}/${piPool}/grants`, { user_id: w.memberA.id });
    expect(g.status, JSON.stringify(g.body)).toBe(201);
    expect(g.body.grants).toEqual([
      expect.objectContaining({ grantee_kind: "user", grantee_id: w.memberA.id, grantee_name: w.memberA.email }),
    ]);
    piGrant = g.body.grants[0].id;
    // memberA: the open node (2) and the pool (4); projectAdminA, in the same project, and memberB: the open node.
    expect(await freeFor(w.memberA)).toMatchObject({ total: 6, nodes: 2 });
    expect(await freeFor(w.projectAdminA)).toMatchObject({ total: 2, nodes: 1 });
    expect(await freeFor(w.memberB)).toMatchObject({ total: 2, nodes: 1 });
    const again = await req(w.superAdmin, "POST", `${BASE}/${piPool}/grants`, { user_id: w.memberA.id });
    expect(again.body.grants).toHaveLength(1);
  });

  it("counts it for no one who belongs to no organization", async () => {
    const g = await req(w.superAdmin, "POST", `${BASE}/${piPool}/grants`, { user_id: w.outsider.id });
    expect(g.status).toBe(201);
    expect(await freeFor(w.outsider)).toMatchObject({ total: 2, nodes: 1 });
    const outsiderGrant = g.body.grants.find((x: { grantee_id: string }) => x.grantee_id === w.outsider.id).id;
    expect((await req(w.superAdmin, "DELETE", `${BASE}/${piPool}/grants/${outsiderGrant}`)).status).toBe(200);
  });

  it("warns that user's running sessions when the grant is removed, and no one else's", async () => {
    const session = (id: string, owner: TestUser) => ({
      id,
      cr_name: id.replace("_", "-"),
      namespace: "org-a",
      owner_id: owner.id,
      organization_id: w.orgA.id,
      project_id: w.projectA.id,
      display_name: "pi work",
      offering: "h100",
      preset: "gpu-small",
      image: "jupyterlab",
      gpu_model: H100,
      gpu_count: 1,
      hourly_credit_rate: "1.00",
      cluster_id: "clu_np",
      node: "pi-1",
      phase: "Running",
    });
    await t.database.db("sessions").insert(session("ses_piwarn00000000000001", w.memberA));
    // Another grant of the same pool keeps its own grantee's session there: not warned.
    const org = await req(w.superAdmin, "POST", `${BASE}/${piPool}/grants`, { organization_id: w.orgB.id });
    expect(org.status).toBe(201);
    await t.database.db("sessions").insert({
      ...session("ses_piwarn00000000000002", w.memberB),
      namespace: "org-b",
      organization_id: w.orgB.id,
      project_id: w.projectB.id,
    });
    const r = await req(w.superAdmin, "DELETE", `${BASE}/${piPool}/grants/${piGrant}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.warned_sessions).toEqual(["ses_piwarn00000000000001"]);
    const inbox = await req(w.memberA, "GET", "/api/v1/notifications");
    expect(inbox.body.data).toContainEqual(
      expect.objectContaining({
        kind: "session.node_pool_revoked",
        data: expect.objectContaining({ pool_id: piPool, session_id: "ses_piwarn00000000000001" }),
      }),
    );
    expect(await freeFor(w.memberA)).toMatchObject({ total: 2, nodes: 1 });
    const audit = await t.database.db("audit_log").where({ action: "node_pool.grant" }).orderBy("id");
    expect(JSON.stringify(audit.map((a: { details: unknown }) => a.details))).toContain(w.memberA.id);
  });

  it("drops the grant with the user's account", async () => {
    const leaver = await t.aUser();
    await t.member(leaver, w.orgA.id, null, "member");
    const g = await req(w.superAdmin, "POST", `${BASE}/${piPool}/grants`, { user_id: leaver.id });
    expect(g.body.grants.map((x: { grantee_id: string }) => x.grantee_id)).toContain(leaver.id);
    expect((await req(w.superAdmin, "DELETE", `/api/v1/users/${leaver.id}`)).status).toBe(204);
    const after = await req(w.superAdmin, "GET", `${BASE}/${piPool}`);
    expect(after.body.grants.map((x: { grantee_id: string }) => x.grantee_id)).not.toContain(leaver.id);
    expect((await req(w.superAdmin, "DELETE", `${BASE}/${piPool}`)).status).toBe(204);
  });
});

describe("node pools refuse bad input with the envelope", () => {
  const code = async (u: TestUser, method: string, path: string, json?: unknown) => {
    const r = await req(u, method, path, json);
    return [r.status, r.body?.error?.code];
  };

  it("an unknown cluster", async () => {
    expect(
      await code(w.superAdmin, "POST", "/api/v1/clusters/clu_nowhere/node-pools", { name: "x", selector: "a=b" }),
    ).toEqual([404, "not_found"]);
  });

  it("a selector that is not one label requirement", async () => {
    for (const selector of ["a=b,c=d", "a!=b", "no spaces=x", "a in ()", "-bad=x", "a=-x-"])
      expect(await code(w.superAdmin, "POST", BASE, { name: "x", selector }), selector).toEqual([
        400,
        "node_selector_invalid",
      ]);
  });

  it("a pool that would share nodes with another: the same label and value, or a node with both labels", async () => {
    const same = await req(w.superAdmin, "POST", BASE, { name: "x", selector: "berth.dev/pool in (research,other)" });
    expect([same.status, same.body.error.code, same.body.error.details.pool_id]).toEqual([
      409,
      "node_pool_overlap",
      poolId,
    ]);
    const both = await req(w.superAdmin, "POST", BASE, { name: "x", selector: "example.org/rack=r7" });
    expect([both.status, both.body.error.code, both.body.error.details.nodes]).toEqual([
      409,
      "node_pool_overlap",
      ["lab-2"],
    ]);
  });

  it("a grant to an unknown organization or user, or to nobody or two grantees", async () => {
    expect(
      await code(w.superAdmin, "POST", `${BASE}/${poolId}/grants`, { organization_id: "org_doesnotexist" }),
    ).toEqual([422, "grantee_not_found"]);
    const nobody = await req(w.superAdmin, "POST", `${BASE}/${poolId}/grants`, { user_id: "usr_doesnotexist" });
    expect([nobody.status, nobody.body.error.code, nobody.body.error.details]).toEqual([
      422,
      "grantee_not_found",
      { grantee: { kind: "user", id: "usr_doesnotexist" } },
    ]);
    expect(await code(w.superAdmin, "POST", `${BASE}/${poolId}/grants`, {})).toEqual([400, "validation_failed"]);
    for (const two of [
      { organization_id: w.orgA.id, project_id: w.projectA.id },
      { organization_id: w.orgA.id, user_id: w.memberA.id },
      { project_id: w.projectA.id, user_id: w.memberA.id },
      { organization_id: w.orgA.id, project_id: w.projectA.id, user_id: w.memberA.id },
    ])
      expect(await code(w.superAdmin, "POST", `${BASE}/${poolId}/grants`, two), JSON.stringify(two)).toEqual([
        400,
        "validation_failed",
      ]);
    for (const bad of [{ user_id: "" }, { user_id: "someone@example.org" }, { user_id: 42 }, { user_id: null }])
      expect(await code(w.superAdmin, "POST", `${BASE}/${poolId}/grants`, bad), JSON.stringify(bad)).toEqual([
        400,
        "validation_failed",
      ]);
  });

  it("malformed bodies and ids", async () => {
    expect(await code(w.superAdmin, "POST", BASE, { name: "Bad Name", selector: "a=b" })).toEqual([
      400,
      "validation_failed",
    ]);
    expect(await code(w.superAdmin, "POST", BASE, { name: "x", selector: "a=b", extra: 1 })).toEqual([
      400,
      "validation_failed",
    ]);
    expect(await code(w.superAdmin, "GET", `${BASE}/not-an-id`)).toEqual([400, "validation_failed"]);
    expect(await code(w.superAdmin, "GET", `${BASE}/npl_aaaaaaaaaaaaaaaaaaaa`)).toEqual([404, "not_found"]);
  });

  it("the wrong user and the wrong organization: only super_admins manage pools", async () => {
    for (const u of [w.adminA, w.adminB, w.memberA, w.outsider]) {
      expect(await code(u, "POST", BASE, { name: "mine", selector: "a=b" })).toEqual([403, "forbidden"]);
      expect(await code(u, "POST", `${BASE}/${poolId}/grants`, { organization_id: w.orgB.id })).toEqual([
        403,
        "forbidden",
      ]);
      // Nor a pool to themselves.
      expect(await code(u, "POST", `${BASE}/${poolId}/grants`, { user_id: u.id })).toEqual([403, "forbidden"]);
      expect(await code(u, "GET", `${BASE}/${poolId}`)).toEqual([403, "forbidden"]);
    }
    // An org admin cannot grant another organization's... or its own: grants are the fleet's.
    expect(await code(w.adminA, "POST", `${BASE}/${poolId}/grants`, { organization_id: w.orgA.id })).toEqual([
      403,
      "forbidden",
    ]);
  });

  it("an expired token and no token", async () => {
    const expired = await t.request("GET", BASE, { token: await t.expiredTokenFor(w.superAdmin.id) });
    expect([expired.status, expired.body.error.code]).toEqual([401, "token_expired"]);
    const none = await t.request("POST", BASE, { json: { name: "x", selector: "a=b" } });
    expect(none.status).toBe(401);
    const grant = await t.request("POST", `${BASE}/${poolId}/grants`, {
      token: await t.expiredTokenFor(w.superAdmin.id),
      json: { user_id: w.memberA.id },
    });
    expect([grant.status, grant.body.error.code]).toEqual([401, "token_expired"]);
  });
});
