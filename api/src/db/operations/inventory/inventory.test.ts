import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db.test-support.ts";
import { insertCluster } from "../clusters/insertCluster.ts";
import { deleteClusterInventory } from "./deleteClusterInventory.ts";
import { insertUsageSamples } from "./insertUsageSamples.ts";
import { listGpuDevices, listNodePools, listNodes } from "./listInventory.ts";
import { replaceClusterInventory } from "./replaceClusterInventory.ts";
import type { InventoryNode } from "./types.ts";
import { setNodeSchedulable } from "./updateNode.ts";
import { upsertSessionStatusReports } from "./upsertSessionStatusReports.ts";

const aNode = (name: string, model = "NVIDIA-H100-80GB-HBM3", gpus = 8): InventoryNode => ({
  name,
  gpu_model: model,
  gpu_count: gpus,
  gpu_allocatable: gpus,
  gpu_in_use: 0,
  labels: { "nvidia.com/gpu.product": model },
  schedulable: true,
  ready: true,
  devices: Array.from({ length: gpus }, (_, index) => ({ index, model })),
});

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  for (const id of ["clu_a", "clu_b"]) {
    await insertCluster(t.db, {
      id,
      name: id,
      session_domain: `${id}.example`,
      registered_by: null,
      registered_at: new Date(),
    });
  }
});
afterAll(async () => t?.drop());

describe("inventory in Postgres", () => {
  it("stores a snapshot, then removes the nodes a later snapshot no longer names", async () => {
    const first = await t.db.transaction((tx) =>
      replaceClusterInventory(tx, "clu_a", new Date(), [aNode("n1"), aNode("n2"), aNode("n3", "NVIDIA-A100", 4)]),
    );
    expect(first).toEqual({ accepted: 3, removed: 0 });
    expect((await listNodes(t.db, { clusterId: "clu_a", limit: 10, offset: 0 })).total).toBe(3);
    expect((await listGpuDevices(t.db, { clusterId: "clu_a", limit: 100, offset: 0 })).total).toBe(20);

    const second = await t.db.transaction((tx) =>
      replaceClusterInventory(tx, "clu_a", new Date(), [aNode("n1"), aNode("n3", "NVIDIA-A100", 4)]),
    );
    expect(second).toEqual({ accepted: 2, removed: 1 });
    const nodes = await listNodes(t.db, { clusterId: "clu_a", limit: 10, offset: 0 });
    expect(nodes.rows.map((n) => n.name)).toEqual(["n1", "n3"]);
    expect((await listGpuDevices(t.db, { clusterId: "clu_a", limit: 100, offset: 0 })).total).toBe(12);
  });

  it("groups nodes into pools per cluster and GPU model, with totals", async () => {
    await t.db.transaction((tx) => replaceClusterInventory(tx, "clu_b", new Date(), [aNode("m1"), aNode("m2")]));
    await setNodeSchedulable(t.db, "clu_b", "m2", false);
    const pools = await listNodePools(t.db, { limit: 10, offset: 0 });
    expect(pools.total).toBe(3);
    const b = pools.rows.find((p) => p.cluster_id === "clu_b");
    expect(b).toMatchObject({
      gpu_model: "NVIDIA-H100-80GB-HBM3",
      nodes: 2,
      ready_nodes: 2,
      schedulable_nodes: 1,
      gpu_count: 16,
    });
    expect((await listNodePools(t.db, { clusterId: "clu_a", limit: 10, offset: 0 })).total).toBe(2);
  });

  it("drops a cluster's nodes and devices and nothing of the others", async () => {
    expect(await deleteClusterInventory(t.db, "clu_b")).toEqual({ nodes: 2, devices: 16 });
    expect((await listNodes(t.db, { limit: 10, offset: 0 })).rows.every((n) => n.cluster_id === "clu_a")).toBe(true);
  });

  it("counts a usage sample id seen before, in the same batch or an earlier one, as a duplicate", async () => {
    const s = (id: string) => ({
      id,
      session: "ses_1",
      start: new Date("2026-11-22T06:00:00Z"),
      end: new Date("2026-11-22T06:01:00Z"),
      gpu_seconds: 60,
    });
    expect(await insertUsageSamples(t.db, "clu_a", [s("u1"), s("u2"), s("u1")])).toEqual({
      accepted: 2,
      duplicates: 1,
    });
    expect(await insertUsageSamples(t.db, "clu_a", [s("u2"), s("u3")])).toEqual({ accepted: 1, duplicates: 1 });
    // The same id on another cluster is another sample.
    expect(await insertUsageSamples(t.db, "clu_b", [s("u1")])).toEqual({ accepted: 1, duplicates: 0 });
  });

  it("keeps the newest status report per session", async () => {
    const at = (m: number) => new Date(Date.UTC(2026, 10, 22, 6, m));
    expect(await upsertSessionStatusReports(t.db, "clu_a", [{ session: "s1", phase: "Running", at: at(2) }])).toBe(1);
    expect(await upsertSessionStatusReports(t.db, "clu_a", [{ session: "s1", phase: "Starting", at: at(1) }])).toBe(0);
    const row = await t.db("session_status_reports").where({ cluster_id: "clu_a", session: "s1" }).first();
    expect(row.phase).toBe("Running");
  });

  it("keeps the newest of a batch's reports on one session, and takes a batch of 1,500 whole", async () => {
    const at = (m: number) => new Date(Date.UTC(2026, 10, 22, 7, m));
    const batch = [
      { session: "s2", phase: "Starting", at: at(1) },
      { session: "s2", phase: "Running", node: "n1", at: at(3) },
      { session: "s2", phase: "Starting", at: at(2) },
      ...Array.from({ length: 1500 }, (_, i) => ({ session: `h${i}`, phase: "Running", at: at(1) })),
    ];
    // Counted as separate calls would count them: s2's first two, not its late older third.
    expect(await upsertSessionStatusReports(t.db, "clu_b", batch)).toBe(1502);
    const row = await t.db("session_status_reports").where({ cluster_id: "clu_b", session: "s2" }).first();
    expect(row).toMatchObject({ phase: "Running", node: "n1" });
    // A heartbeat re-sends the same states later: all applied; a late older one: none.
    const again = Array.from({ length: 1500 }, (_, i) => ({ session: `h${i}`, phase: "Running", at: at(5) }));
    expect(await upsertSessionStatusReports(t.db, "clu_b", again)).toBe(1500);
    expect(await upsertSessionStatusReports(t.db, "clu_b", [{ session: "h7", phase: "Starting", at: at(4) }])).toBe(0);
    expect(await t.db("session_status_reports").where({ cluster_id: "clu_b" }).count({ n: "*" })).toEqual([
      { n: "1501" },
    ]);
  });
});
