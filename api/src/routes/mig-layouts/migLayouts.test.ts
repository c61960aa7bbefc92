// MIG layouts over HTTP against real Postgres: a super_admin marks a cluster's H100 nodes, by a label, as
// MIG-partitioned; availability then offers the layout's profiles those nodes advertise, and only those.
// Bad input gets the envelope with a stable code; only super_admins mark nodes.
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
const BASE = "/api/v1/clusters/clu_mig/mig-layouts";

async function aMigNode(name: string, labels: Record<string, string>, mig: Record<string, number>) {
  await t.database.db("cluster_nodes").insert({
    cluster_id: "clu_mig",
    name,
    gpu_model: H100,
    gpu_count: 2,
    gpu_allocatable: 0,
    gpu_in_use: 0,
    schedulable: true,
    ready: true,
    labels: JSON.stringify(labels),
    mig: JSON.stringify(Object.fromEntries(Object.entries(mig).map(([p, n]) => [p, { allocatable: n, in_use: 0 }]))),
    observed_at: new Date(),
  });
}

beforeAll(async () => {
  t = await startIdentityTestApi();
  w = await anIdentityWorld(t);
  await aGpuCluster(t.database.db, "clu_mig", 2); // node n1: two whole H100s
  await aMigNode("mig-1", { "berth.dev/mig": "mixed" }, { "3g.40gb": 2, "2g.20gb": 2, "1g.10gb": 4 });
  // Advertises MIG but nobody marked it: not offered.
  await aMigNode("mig-2", {}, { "1g.10gb": 14 });
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

const req = (u: TestUser, method: string, path: string, json?: unknown) =>
  t.request(method, path, { token: u.token, ...(json !== undefined ? { json } : {}) });
const code = async (u: TestUser, method: string, path: string, json?: unknown) => {
  const r = await req(u, method, path, json);
  return [r.status, r.body?.error?.code];
};
const migFree = async (u: TestUser) => {
  const r = await req(u, "GET", "/api/v1/sessions/gpu-availability");
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body.clusters as { cluster_id: string; mig_free: Record<string, number> }[]).find(
    (c) => c.cluster_id === "clu_mig",
  )?.mig_free;
};

const layout = {
  selector: "berth.dev/mig=mixed",
  gpu_model: H100,
  profiles: { "3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2 },
};
let layoutId = "";

describe("MIG layouts", () => {
  it("offers no MIG profile before an administrator marks a node", async () => {
    expect(await migFree(w.memberA)).toEqual({});
  });

  it("marks the labelled nodes with a layout; availability offers its profiles they advertise", async () => {
    const r = await req(w.superAdmin, "POST", BASE, layout);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({
      cluster_id: "clu_mig",
      gpu_model: H100,
      selector: "berth.dev/mig=mixed",
      profiles: layout.profiles,
      nodes: [{ name: "mig-1", advertised: { "3g.40gb": 2, "2g.20gb": 2, "1g.10gb": 4 } }],
    });
    layoutId = r.body.id;
    expect(await migFree(w.memberA)).toEqual({ "3g.40gb": 2, "2g.20gb": 2, "1g.10gb": 4 });
  });

  it("lists the cluster's layouts for a super_admin and none for anyone else", async () => {
    const mine = await req(w.superAdmin, "GET", BASE);
    expect(mine.body.data.map((l: { id: string }) => l.id)).toEqual([layoutId]);
    const theirs = await req(w.adminA, "GET", BASE);
    expect(theirs.body).toMatchObject({ data: [], pagination: { total: 0 } });
  });

  it("refuses a layout that would mark a node another layout of the model marks: 409 mig_layout_overlap", async () => {
    const same = await req(w.superAdmin, "POST", BASE, { ...layout, selector: "berth.dev/mig in (mixed,other)" });
    expect([same.status, same.body.error.code]).toEqual([409, "mig_layout_overlap"]);
    expect(same.body.error.details).toEqual({ layout_id: layoutId, gpu_model: H100, nodes: ["mig-1"] });
    // Another label, but a node reported with both.
    await aMigNode("mig-3", { "berth.dev/mig": "mixed", "berth.dev/zone": "a" }, {});
    try {
      const both = await req(w.superAdmin, "POST", BASE, { ...layout, selector: "berth.dev/zone=a" });
      expect([both.status, both.body.error.code]).toEqual([409, "mig_layout_overlap"]);
      expect(both.body.error.details.nodes).toEqual(["mig-3"]);
    } finally {
      await t.database.db("cluster_nodes").where({ cluster_id: "clu_mig", name: "mig-3" }).delete();
    }
    // Another model never meets it: a node has one model.
    const a100 = await req(w.superAdmin, "POST", BASE, { ...layout, gpu_model: "NVIDIA-A100-SXM4-80GB" });
    expect(a100.status, JSON.stringify(a100.body)).toBe(201);
    expect((await req(w.superAdmin, "DELETE", `${BASE}/${a100.body.id}`)).status).toBe(204);
    // Nothing was written by the refusals.
    const listed = await req(w.superAdmin, "GET", BASE);
    expect(listed.body.data.map((l: { id: string }) => l.id)).toEqual([layoutId]);
  });

  it("refuses an unknown profile, another model's, and a layout that over-fills the card, each with its code", async () => {
    const r = await req(w.superAdmin, "POST", BASE, { ...layout, profiles: { "5g.50gb": 1 } });
    expect([r.status, r.body.error.code]).toEqual([400, "mig_profile_unknown"]);
    expect(r.body.error.details.allowed).toContain("1g.10gb");
    const other = await req(w.superAdmin, "POST", BASE, { ...layout, profiles: { "1g.5gb": 7 } });
    expect([other.status, other.body.error.code]).toEqual([400, "mig_profile_not_for_model"]);
    expect(other.body.error.details.allowed).toEqual([
      "1g.10gb",
      "1g.20gb",
      "2g.20gb",
      "3g.40gb",
      "4g.40gb",
      "7g.80gb",
    ]);
    const l4 = await req(w.superAdmin, "POST", BASE, { ...layout, gpu_model: "NVIDIA-L4", profiles: { "1g.10gb": 1 } });
    expect([l4.status, l4.body.error.code]).toEqual([400, "mig_profile_not_for_model"]);
    const proto = await req(w.superAdmin, "POST", BASE, { ...layout, gpu_model: "constructor" });
    expect([proto.status, proto.body.error.code]).toEqual([400, "mig_profile_not_for_model"]);
    const full = await req(w.superAdmin, "POST", BASE, { ...layout, profiles: { "3g.40gb": 2, "1g.10gb": 1 } });
    expect([full.status, full.body.error.code]).toEqual([400, "mig_layout_overfilled"]);
    expect(full.body.error.details).toMatchObject({ compute_slices: 7, memory_slices: 9, max_memory_slices: 8 });
    const bound = await req(w.superAdmin, "POST", BASE, { ...layout, profiles: { "4g.40gb": 2 } });
    expect(bound.body.error).toMatchObject({ code: "mig_layout_overfilled", details: { max_per_card: 1 } });
  });

  it("refuses malformed input with validation_failed or the selector's code", async () => {
    expect(await code(w.superAdmin, "POST", BASE, { ...layout, profiles: {} })).toEqual([400, "validation_failed"]);
    expect(await code(w.superAdmin, "POST", BASE, { ...layout, profiles: { "1g.10gb": 0 } })).toEqual([
      400,
      "validation_failed",
    ]);
    expect(await code(w.superAdmin, "POST", BASE, { ...layout, extra: 1 })).toEqual([400, "validation_failed"]);
    expect(await code(w.superAdmin, "POST", BASE, { ...layout, selector: "a=b,c=d" })).toEqual([
      400,
      "node_selector_invalid",
    ]);
    expect(await code(w.superAdmin, "DELETE", `${BASE}/not-an-id`)).toEqual([400, "validation_failed"]);
    expect(await code(w.superAdmin, "DELETE", `${BASE}/mig_aaaaaaaaaaaaaaaaaaaa`)).toEqual([404, "not_found"]);
    expect(await code(w.superAdmin, "POST", "/api/v1/clusters/clu_none/mig-layouts", layout)).toEqual([
      404,
      "not_found",
    ]);
  });

  it("the wrong user and the wrong organization: only super_admins mark nodes", async () => {
    for (const u of [w.adminA, w.adminB, w.memberA, w.outsider])
      expect(await code(u, "POST", BASE, layout)).toEqual([403, "forbidden"]);
    expect(await code(w.adminB, "DELETE", `${BASE}/${layoutId}`)).toEqual([403, "forbidden"]);
  });

  it("an expired token and no token", async () => {
    const expired = await t.request("GET", BASE, { token: await t.expiredTokenFor(w.superAdmin.id) });
    expect([expired.status, expired.body.error.code]).toEqual([401, "token_expired"]);
    const none = await t.request("POST", BASE, { json: layout });
    expect(none.status).toBe(401);
  });

  it("removing the layout stops offering its profiles", async () => {
    expect((await req(w.superAdmin, "DELETE", `${BASE}/${layoutId}`)).status).toBe(204);
    expect(await migFree(w.memberA)).toEqual({});
  });
});
