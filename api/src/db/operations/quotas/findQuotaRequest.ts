import type { Knex } from "knex";
import type { QuotaRequestRow } from "./types.ts";

/** `forUpdate`: locks the row until the transaction ends (a decision reads it so, once). */
export async function findQuotaRequest(
  db: Knex,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<QuotaRequestRow | undefined> {
  const q = db("quota_requests")
    .leftJoin("users", "users.id", "quota_requests.requester_id")
    .where("quota_requests.id", id)
    .first("quota_requests.*", "users.email as requester_email");
  if (opts.forUpdate) q.forUpdate("quota_requests");
  return (await q) as QuotaRequestRow | undefined;
}
