import type { Knex } from "knex";

/**
 * Default answer to "does anything still run on this cluster?" until the sessions domain injects its
 * own: rows of a `sessions` table with `cluster_id` = the cluster, not in a terminal phase (when the
 * table has a `phase` column) or not ended (when it has `terminated_at`). No such table: false.
 */
export async function hasLiveSessions(db: Knex, clusterId: string): Promise<boolean> {
  const cols = (await db("information_schema.columns")
    .select("column_name")
    .where({ table_name: "sessions" })
    .whereRaw("table_schema = current_schema()")) as { column_name: string }[];
  const names = new Set(cols.map((c) => c.column_name));
  if (!names.has("cluster_id")) return false;
  const q = db("sessions").where({ cluster_id: clusterId }).first(db.raw("1 as one"));
  if (names.has("phase")) q.whereNotIn("phase", ["Terminated", "Failed"]);
  else if (names.has("terminated_at")) q.whereNull("terminated_at");
  return (await q) !== undefined;
}
