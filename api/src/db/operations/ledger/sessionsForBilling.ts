import type { Knex } from "knex";

export interface BillableSession {
  id: string;
  owner_id: string;
  organization_id: string;
  project_id: string | null;
  offering: string;
  gpu_count: number;
  hourly_credit_rate: string;
  /** The offering's GPUs at creation (the recorded rate is for all of them). */
  offering_gpu_count: number;
  /** docs/dev/fair-share.md: a borrowed session pays its offering's borrowed share of the rate. */
  capacity_class?: "guaranteed" | "borrowed";
  /** The share recorded at creation (thousandths), for when the offering no longer exists. */
  rate_permille?: number;
}

/** The columns of a BillableSession: what charging and the door read of a session. */
export const BILLABLE_COLUMNS = [
  "id",
  "owner_id",
  "organization_id",
  "project_id",
  "offering",
  "gpu_count",
  "hourly_credit_rate",
  "offering_gpu_count",
  "capacity_class",
  "rate_permille",
] as const;

export async function sessionsForBilling(db: Knex, ids: readonly string[]): Promise<Map<string, BillableSession>> {
  if (ids.length === 0) return new Map();
  const rows = (await db("sessions")
    .select(...BILLABLE_COLUMNS)
    .whereIn("id", [...new Set(ids)])) as BillableSession[];
  return new Map(rows.map((r) => [r.id, r]));
}
