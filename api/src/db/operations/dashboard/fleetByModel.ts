import type { Knex } from "knex";

export interface FleetRow {
  cluster_id: string;
  cluster_name: string;
  gpu_model: string;
  nodes: number;
  total: number;
  allocated: number;
  free: number;
}

/**
 * GPUs per live cluster and model from the operators' inventory: `free` counts only nodes that take new
 * sessions (ready and not cordoned).
 */
export async function fleetByModel(db: Knex, clusterId?: string): Promise<FleetRow[]> {
  const q = db("cluster_nodes as n")
    .join("clusters as c", "c.id", "n.cluster_id")
    .whereNull("c.deregistered_at")
    .whereNotNull("n.gpu_model")
    .groupBy("n.cluster_id", "c.name", "n.gpu_model")
    .orderBy([{ column: "c.name" }, { column: "n.gpu_model" }])
    .select(
      "n.cluster_id",
      "c.name as cluster_name",
      "n.gpu_model",
      db.raw("count(*)::int as nodes"),
      db.raw("coalesce(sum(n.gpu_count), 0)::int as total"),
      db.raw("coalesce(sum(n.gpu_in_use), 0)::int as allocated"),
      db.raw(
        "coalesce(sum(greatest(n.gpu_allocatable - n.gpu_in_use, 0)) filter (where n.ready and n.schedulable), 0)::int as free",
      ),
    );
  if (clusterId) q.where("n.cluster_id", clusterId);
  return q;
}
