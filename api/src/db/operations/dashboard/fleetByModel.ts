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

export interface NodeTroubleRow {
  cluster_id: string;
  name: string;
  gpu_model: string | null;
  schedulable: boolean;
  ready: boolean;
}

/** Nodes cordoned or not ready (at most `limit`), and how many of each there are. */
export async function troubledNodes(
  db: Knex,
  limit: number,
  clusterId?: string,
): Promise<{ cordoned: number; notReady: number; nodes: NodeTroubleRow[] }> {
  const base = () => {
    const q = db("cluster_nodes as n").join("clusters as c", "c.id", "n.cluster_id").whereNull("c.deregistered_at");
    if (clusterId) q.where("n.cluster_id", clusterId);
    return q;
  };
  const [counts, nodes] = await Promise.all([
    base()
      .select(
        db.raw("count(*) filter (where not n.schedulable)::int as cordoned"),
        db.raw("count(*) filter (where not n.ready)::int as not_ready"),
      )
      .first(),
    base()
      .where((w) => w.where("n.schedulable", false).orWhere("n.ready", false))
      .orderBy([{ column: "n.cluster_id" }, { column: "n.name" }])
      .limit(limit)
      .select("n.cluster_id", "n.name", "n.gpu_model", "n.schedulable", "n.ready"),
  ]);
  return { cordoned: counts?.cordoned ?? 0, notReady: counts?.not_ready ?? 0, nodes };
}
