import type { Knex } from "knex";
import { selectPage } from "../../page.ts";
import type { ClusterNodeRow, GpuDeviceRow, NodePoolRow } from "./types.ts";

export interface InventoryListQuery {
  clusterId?: string;
  limit: number;
  offset: number;
}

export async function listNodes(db: Knex, q: InventoryListQuery): Promise<{ rows: ClusterNodeRow[]; total: number }> {
  const base = db("cluster_nodes").select("*");
  if (q.clusterId) base.where({ cluster_id: q.clusterId });
  return selectPage<ClusterNodeRow>(db, base.orderBy([{ column: "cluster_id" }, { column: "name" }]), q);
}

export async function listGpuDevices(
  db: Knex,
  q: InventoryListQuery & { nodeName?: string },
): Promise<{ rows: GpuDeviceRow[]; total: number }> {
  const base = db("gpu_devices").select("*");
  if (q.clusterId) base.where({ cluster_id: q.clusterId });
  if (q.nodeName) base.where({ node_name: q.nodeName });
  return selectPage<GpuDeviceRow>(
    db,
    base.orderBy([{ column: "cluster_id" }, { column: "node_name" }, { column: "index" }]),
    q,
  );
}

/** Nodes grouped by cluster and GPU model, with totals. */
export async function listNodePools(db: Knex, q: InventoryListQuery): Promise<{ rows: NodePoolRow[]; total: number }> {
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
  if (q.clusterId) grouped.where({ cluster_id: q.clusterId });
  // The window total counts groups: it is computed after GROUP BY.
  return selectPage<NodePoolRow>(db, grouped.orderBy([{ column: "cluster_id" }, { column: "gpu_model" }]), q);
}
