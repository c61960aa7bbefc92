import type { Knex } from "knex";
import type { ClusterRow } from "./types.ts";

/** Throws the driver's unique violation (23505) when a registered cluster already has the name. */
export async function insertCluster(
  db: Knex,
  c: { id: string; name: string; session_domain: string; registered_by: string | null; registered_at: Date },
): Promise<ClusterRow> {
  const [row] = await db<ClusterRow>("clusters").insert(c).returning("*");
  return row as ClusterRow;
}
