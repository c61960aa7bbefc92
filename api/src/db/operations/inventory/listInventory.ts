import type { Knex } from "knex";
import type { ClusterNodeRow, GpuDeviceRow, NodePoolRow } from "./types.ts";

export interface InventoryListQuery {
  clusterId?: string;
  limit: number;
  offset: number;
}

async function page<T>(
  base: Knex.QueryBuilder,
  order: (q: Knex.QueryBuilder) => Knex.QueryBuilder,
  q: InventoryListQuery,
) {
  const [count] = await base.clone().clearSelect().count<{ count: string }[]>({ count: "*" });
  const rows = (await order(base.clone()).limit(q.limit).offset(q.offset)) as T[];
  return { rows, total: Number(count?.count ?? 0) };
}

export async function listNodes(db: Knex, q: InventoryListQuery): Promise<{ rows: ClusterNodeRow[]; total: number }> {
  const base = db("cluster_nodes").select("*");
  if (q.clusterId) base.where({ cluster_id: q.clusterId });
  return page<ClusterNodeRow>(base, (b) => b.orderBy([{ column: "cluster_id" }, { column: "name" }]), q);
}

export async function listGpuDevices(
  db: Knex,
  q: InventoryListQuery & { nodeName?: string },
): Promise<{ rows: GpuDeviceRow[]; total: number }> {
  const base = db("gpu_devices").select("*");
  if (q.clusterId) base.where({ cluster_id: q.clusterId });
  if (q.nodeName) base.where({ node_name: q.nodeName });
  return page<GpuDeviceRow>(
    base,
    (b) => b.orderBy([{ column: "cluster_id" }, { column: "node_name" }, { column: "index" }]),
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
  const [count] = await db.count<{ count: string }[]>({ count: "*" }).from(grouped.clone().as("pools"));
  const rows = (await grouped
    .orderBy([{ column: "cluster_id" }, { column: "gpu_model" }])
    .limit(q.limit)
    .offset(q.offset)) as NodePoolRow[];
  return { rows, total: Number(count?.count ?? 0) };
}
