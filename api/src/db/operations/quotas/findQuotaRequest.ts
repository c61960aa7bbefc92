import type { Knex } from "knex";
import type { QuotaRequestRow } from "./types.ts";

/** `forUpdate`: locks the row until the transaction ends (a decision reads it so, once). */
export async function findQuotaRequest(
  db: Knex,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<QuotaRequestRow | undefined> {
  const q = db("quota_requests").where({ id }).first();
  if (opts.forUpdate) q.forUpdate();
  return (await q) as QuotaRequestRow | undefined;
}
