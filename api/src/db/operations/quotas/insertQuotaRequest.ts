import type { Knex } from "knex";
import type { LimitValues, QuotaRequestRow, QuotaRequestScope } from "./types.ts";

export async function insertQuotaRequest(
  db: Knex,
  r: {
    id: string;
    organizationId: string;
    projectId: string | null;
    scope: QuotaRequestScope;
    requesterId: string;
    asked: LimitValues;
    current: Record<string, number | null>;
    reason: string;
    at: Date;
  },
): Promise<QuotaRequestRow> {
  const [row] = (await db("quota_requests")
    .insert({
      id: r.id,
      organization_id: r.organizationId,
      project_id: r.projectId,
      scope: r.scope,
      requester_id: r.requesterId,
      asked: JSON.stringify(r.asked),
      current: JSON.stringify(r.current),
      reason: r.reason,
      created_at: r.at,
    })
    .returning("*")) as QuotaRequestRow[];
  return row as QuotaRequestRow;
}
