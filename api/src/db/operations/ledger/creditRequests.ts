import type { Knex } from "knex";

export type CreditRequestStatus = "pending" | "approved" | "partially_approved" | "denied" | "cancelled";

export interface CreditRequestRow {
  id: string;
  wallet_id: string;
  organization_id: string;
  project_id: string | null;
  requester_id: string;
  amount: string;
  reason: string;
  status: CreditRequestStatus;
  approved_amount: string | null;
  decided_by: string | null;
  decision_note: string | null;
  txn_seq: string | null;
  created_at: Date;
  decided_at: Date | null;
}

export async function insertCreditRequest(
  db: Knex,
  r: {
    id: string;
    walletId: string;
    organizationId: string;
    projectId: string | null;
    requesterId: string;
    amount: bigint;
    reason: string;
    at: Date;
  },
): Promise<CreditRequestRow> {
  const [row] = (await db("credit_requests")
    .insert({
      id: r.id,
      wallet_id: r.walletId,
      organization_id: r.organizationId,
      project_id: r.projectId,
      requester_id: r.requesterId,
      amount: r.amount.toString(),
      reason: r.reason,
      created_at: r.at,
    })
    .returning("*")) as CreditRequestRow[];
  return row as CreditRequestRow;
}

export async function findCreditRequest(
  db: Knex,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<CreditRequestRow | undefined> {
  const q = db("credit_requests").where({ id }).first();
  if (opts.forUpdate) q.forUpdate();
  return (await q) as CreditRequestRow | undefined;
}

export async function decideCreditRequest(
  db: Knex,
  id: string,
  d: {
    status: CreditRequestStatus;
    approvedAmount?: bigint | null;
    by: string;
    note?: string | null;
    txnSeq?: string | null;
    at: Date;
  },
): Promise<CreditRequestRow> {
  const [row] = (await db("credit_requests")
    .where({ id, status: "pending" })
    .update({
      status: d.status,
      approved_amount: d.approvedAmount === undefined || d.approvedAmount === null ? null : d.approvedAmount.toString(),
      decided_by: d.by,
      decision_note: d.note ?? null,
      txn_seq: d.txnSeq ?? null,
      decided_at: d.at,
    })
    .returning("*")) as CreditRequestRow[];
  return row as CreditRequestRow;
}

export interface CreditRequestVisibility {
  all: boolean;
  requesterId: string;
  organizationIds: string[];
  projectIds: string[];
}

export function creditRequestsQuery(
  db: Knex,
  v: CreditRequestVisibility,
  f: { status?: string; organizationId?: string },
): Knex.QueryBuilder {
  const q = db("credit_requests").select("*");
  if (!v.all)
    q.where((w) => {
      w.where("requester_id", v.requesterId);
      if (v.organizationIds.length) w.orWhereIn("organization_id", v.organizationIds);
      if (v.projectIds.length) w.orWhereIn("project_id", v.projectIds);
    });
  if (f.status) q.where("status", f.status);
  if (f.organizationId) q.where("organization_id", f.organizationId);
  return q.orderBy([
    { column: "created_at", order: "desc" },
    { column: "id", order: "desc" },
  ]);
}
