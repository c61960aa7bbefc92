import type { Knex } from "knex";

export interface NodeActionRecord {
  cluster_id: string;
  node_name: string;
  action: "cordon" | "uncordon" | "drain" | "delete";
  actor_id: string | null;
  outcome: "success" | "partial" | "failure";
  result: Record<string, unknown>;
  at: Date;
}

export async function recordNodeAction(db: Knex, r: NodeActionRecord): Promise<void> {
  await db("cluster_node_actions").insert({ ...r, result: JSON.stringify(r.result) });
}
