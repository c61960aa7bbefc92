import type { Knex } from "knex";

/**
 * Default answer to "does anything still live on this cluster?" (the deregistration guard), from the
 * sessions history table: a session placed on the cluster (`cluster_id`) or pinned to it (`cluster_pin`)
 * whose phase is not terminal. Paused sessions count: their volumes' claims live on the cluster and
 * resuming brings them back there. A database without the sessions table answers false.
 */
export async function hasLiveSessions(db: Knex, clusterId: string): Promise<boolean> {
  const cols = (await db("information_schema.columns")
    .select("column_name")
    .where({ table_name: "sessions" })
    .whereRaw("table_schema = current_schema()")) as { column_name: string }[];
  const names = new Set(cols.map((c) => c.column_name));
  if (!names.has("cluster_id")) return false;
  const q = db("sessions")
    .where((w) => {
      w.where({ cluster_id: clusterId });
      if (names.has("cluster_pin")) w.orWhere({ cluster_pin: clusterId });
    })
    .first(db.raw("1 as one"));
  if (names.has("phase")) q.whereNotIn("phase", ["Terminated", "Failed"]);
  else if (names.has("terminated_at")) q.whereNull("terminated_at");
  return (await q) !== undefined;
}
