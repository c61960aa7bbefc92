import type { Knex } from "knex";
import type { LimitValues, QuotaRequestRow, QuotaRequestStatus } from "./types.ts";

/** Closes a pending request; undefined when it was not pending (someone decided first). */
export async function decideQuotaRequest(
  db: Knex,
  id: string,
  d: {
    status: Exclude<QuotaRequestStatus, "pending">;
    granted?: LimitValues | null;
    policyName?: string | null;
    by: string;
    note?: string | null;
    at: Date;
  },
): Promise<QuotaRequestRow | undefined> {
  const [row] = (await db("quota_requests")
    .where({ id, status: "pending" })
    .update({
      status: d.status,
      granted: d.granted ? JSON.stringify(d.granted) : null,
      policy_name: d.policyName ?? null,
      decided_by: d.by,
      decision_note: d.note ?? null,
      decided_at: d.at,
    })
    .returning("*")) as QuotaRequestRow[];
  return row;
}
