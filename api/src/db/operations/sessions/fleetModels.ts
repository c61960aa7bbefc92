import type { Knex } from "knex";

/** The query of fleetModels running now, by database and cluster (""): concurrent callers share it. */
const running = new WeakMap<Knex, Map<string, Promise<string[]>>>();

/**
 * GPU models with allocatable GPUs on registered clusters (optionally one cluster), sorted. Every create
 * asks it, and its join grows with the fleet's nodes: callers that ask while it runs share its answer (read
 * after they asked or at most one query's time before), so a burst of creates costs one query, not one each.
 */
export function fleetModels(db: Knex, clusterId?: string): Promise<string[]> {
  let byCluster = running.get(db);
  if (!byCluster) {
    byCluster = new Map();
    running.set(db, byCluster);
  }
  const key = clusterId ?? "";
  const now = byCluster.get(key);
  if (now) return now;
  const asked = readFleetModels(db, clusterId).finally(() => byCluster.delete(key));
  byCluster.set(key, asked);
  return asked;
}

async function readFleetModels(db: Knex, clusterId?: string): Promise<string[]> {
  const q = db("cluster_nodes as n")
    .join("clusters as c", "c.id", "n.cluster_id")
    .whereNull("c.deregistered_at")
    .whereNotNull("n.gpu_model")
    .where("n.gpu_allocatable", ">", 0)
    .distinct("n.gpu_model")
    .orderBy("n.gpu_model");
  if (clusterId) q.where("n.cluster_id", clusterId);
  return ((await q) as { gpu_model: string }[]).map((r) => r.gpu_model);
}

/** Free and total GPUs per registered cluster and model, from the inventory. */
export async function inventoryByClusterModel(db: Knex): Promise<
  {
    cluster_id: string;
    cluster_name: string;
    gpu_model: string;
    total: number;
    allocatable: number;
    in_use: number;
    nodes: number;
    largest_node: number;
  }[]
> {
  return (await db("cluster_nodes as n")
    .join("clusters as c", "c.id", "n.cluster_id")
    .whereNull("c.deregistered_at")
    .whereNotNull("n.gpu_model")
    .where({ "n.ready": true, "n.schedulable": true })
    .groupBy("n.cluster_id", "c.name", "n.gpu_model")
    .orderBy([{ column: "n.cluster_id" }, { column: "n.gpu_model" }])
    .select(
      "n.cluster_id",
      "c.name as cluster_name",
      "n.gpu_model",
      db.raw("sum(n.gpu_count)::int as total"),
      db.raw("sum(n.gpu_allocatable)::int as allocatable"),
      db.raw("sum(n.gpu_in_use)::int as in_use"),
      db.raw("count(*)::int as nodes"),
      db.raw("max(n.gpu_allocatable)::int as largest_node"),
    )) as never;
}
