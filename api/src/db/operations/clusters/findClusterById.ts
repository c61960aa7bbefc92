import type { Knex } from "knex";
import type { ClusterRow } from "./types.ts";

/** Registered or deregistered; `forUpdate` locks the row for the transaction. */
export async function findClusterById(
  db: Knex,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<ClusterRow | undefined> {
  const q = db<ClusterRow>("clusters").where({ id }).first();
  if (opts.forUpdate) q.forUpdate();
  return (await q) as ClusterRow | undefined;
}
