import type { Knex } from "knex";

/** The names people know these clusters by (deregistered ones too: a chart may reach back before it). */
export async function clusterNames(db: Knex, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = (await db("clusters")
    .whereIn("id", ids as string[])
    .select("id", "name")) as {
    id: string;
    name: string;
  }[];
  return new Map(rows.map((r) => [r.id, r.name]));
}
