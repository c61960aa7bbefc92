import type { Knex } from "knex";

export interface RefillRow {
  id: string;
  wallet_id: string;
  source_wallet_id: string;
  organization_id: string | null;
  mode: "top_up_to" | "add";
  amount: string;
  period: "daily" | "weekly" | "monthly";
  enabled: boolean;
  starts_at: Date;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

export interface RefillApplicationRow {
  refill_id: string;
  period_start: Date;
  txn_seq: string | null;
  requested: string;
  moved: string;
  applied_at: Date;
}

export async function insertRefill(db: Knex, r: Omit<RefillRow, "enabled" | "updated_at">): Promise<RefillRow> {
  const [row] = (await db("refills")
    .insert({ ...r, enabled: true, updated_at: r.created_at })
    .returning("*")) as RefillRow[];
  return row as RefillRow;
}

export async function findRefill(db: Knex, id: string): Promise<RefillRow | undefined> {
  return (await db("refills").where({ id }).first()) as RefillRow | undefined;
}

export async function updateRefill(
  db: Knex,
  id: string,
  patch: Partial<Pick<RefillRow, "mode" | "amount" | "period" | "enabled">>,
  at: Date,
): Promise<RefillRow | undefined> {
  const [row] = (await db("refills")
    .where({ id })
    .update({ ...patch, updated_at: at })
    .returning("*")) as RefillRow[];
  return row;
}

export function refillsQuery(db: Knex, walletIds: string[] | "all"): Knex.QueryBuilder {
  const q = db("refills")
    .select("*")
    .orderBy([
      { column: "created_at", order: "desc" },
      { column: "id", order: "desc" },
    ]);
  if (walletIds !== "all") q.where((w) => w.whereIn("wallet_id", walletIds).orWhereIn("source_wallet_id", walletIds));
  return q;
}

export async function enabledRefills(db: Knex): Promise<RefillRow[]> {
  return (await db("refills").where({ enabled: true }).orderBy("id")) as RefillRow[];
}

/** The newest period already applied per refill. */
export async function lastApplications(db: Knex, refillIds: string[]): Promise<Map<string, Date>> {
  if (refillIds.length === 0) return new Map();
  const rows = (await db("refill_applications")
    .whereIn("refill_id", refillIds)
    .groupBy("refill_id")
    .select("refill_id", db.raw("max(period_start) AS last"))) as { refill_id: string; last: Date }[];
  return new Map(rows.map((r) => [r.refill_id, r.last]));
}

/** Claims (refill, period); false when it was applied already — the primary key decides, once. */
export async function claimRefillPeriod(
  tx: Knex.Transaction,
  refillId: string,
  periodStart: Date,
  at: Date,
): Promise<boolean> {
  const r = (await tx.raw(
    `INSERT INTO refill_applications (refill_id, period_start, requested, moved, applied_at) VALUES (?, ?, 0, 0, ?)
     ON CONFLICT (refill_id, period_start) DO NOTHING RETURNING refill_id`,
    [refillId, periodStart, at],
  )) as { rows: unknown[] };
  return r.rows.length === 1;
}

export async function recordRefillApplication(
  tx: Knex.Transaction,
  a: { refillId: string; periodStart: Date; txnSeq: string | null; requested: bigint; moved: bigint },
): Promise<void> {
  await tx("refill_applications")
    .where({ refill_id: a.refillId, period_start: a.periodStart })
    .update({ txn_seq: a.txnSeq, requested: a.requested.toString(), moved: a.moved.toString() });
}

export async function refillApplications(db: Knex, refillId: string, limit = 12): Promise<RefillApplicationRow[]> {
  return (await db("refill_applications")
    .where({ refill_id: refillId })
    .orderBy("period_start", "desc")
    .limit(limit)) as RefillApplicationRow[];
}
