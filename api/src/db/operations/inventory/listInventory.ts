import type { Knex } from "knex";
import { pageQuery } from "../../page.ts";
import type { ClusterNodeRow, GpuDeviceRow, NodePoolRow } from "./types.ts";

export interface InventoryListQuery {
  clusterId?: string;
  limit: number;
  offset: number;
}

// Each list is compiled once per shape of its parameters (db/page.ts, pageQuery): it may read `p` only as values.

const nodesPage = pageQuery<ClusterNodeRow, { clusterId: string | undefined }>("nodes", (db, p) => {
  const base = db("cluster_nodes").select("*");
  if (p.clusterId) base.where({ cluster_id: p.clusterId });
  return base.orderBy([{ column: "cluster_id" }, { column: "name" }]);
});

export async function listNodes(db: Knex, q: InventoryListQuery): Promise<{ rows: ClusterNodeRow[]; total: number }> {
  return nodesPage(db, { clusterId: q.clusterId || undefined }, q);
}

const gpuDevicesPage = pageQuery<GpuDeviceRow, { clusterId: string | undefined; nodeName: string | undefined }>(
  "gpu devices",
  (db, p) => {
    const base = db("gpu_devices").select("*");
    if (p.clusterId) base.where({ cluster_id: p.clusterId });
    if (p.nodeName) base.where({ node_name: p.nodeName });
    return base.orderBy([{ column: "cluster_id" }, { column: "node_name" }, { column: "index" }]);
  },
);

export async function listGpuDevices(
  db: Knex,
  q: InventoryListQuery & { nodeName?: string },
): Promise<{ rows: GpuDeviceRow[]; total: number }> {
  return gpuDevicesPage(db, { clusterId: q.clusterId || undefined, nodeName: q.nodeName || undefined }, q);
}

const nodePoolsPage = pageQuery<NodePoolRow, { clusterId: string | undefined }>("node pools", (db, p) => {
  const grouped = db("cluster_nodes")
    .select("cluster_id", "gpu_model")
    .select(
      db.raw("count(*)::int as nodes"),
      db.raw("(count(*) filter (where ready))::int as ready_nodes"),
      db.raw("(count(*) filter (where schedulable and ready))::int as schedulable_nodes"),
      db.raw("coalesce(sum(gpu_count), 0)::int as gpu_count"),
      db.raw("coalesce(sum(gpu_allocatable), 0)::int as gpu_allocatable"),
      db.raw("coalesce(sum(gpu_in_use), 0)::int as gpu_in_use"),
      db.raw(
        "(coalesce(sum(greatest(gpu_allocatable - gpu_in_use, 0)) filter (where ready and schedulable), 0))::int as gpu_free",
      ),
    )
    .groupBy("cluster_id", "gpu_model");
  if (p.clusterId) grouped.where({ cluster_id: p.clusterId });
  // The window total counts groups: it is computed after GROUP BY.
  return grouped.orderBy([{ column: "cluster_id" }, { column: "gpu_model" }]);
});

/** Nodes grouped by cluster and GPU model, with totals. */
export async function listNodePools(db: Knex, q: InventoryListQuery): Promise<{ rows: NodePoolRow[]; total: number }> {
  return nodePoolsPage(db, { clusterId: q.clusterId || undefined }, q);
}
