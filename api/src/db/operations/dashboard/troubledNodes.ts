import type { Knex } from "knex";

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
