import type { Knex } from "knex";

export const MOVEMENT_KINDS = ["grant", "allocation", "request", "refill", "reversal"] as const;

export interface MovementRow {
  seq: string;
  id: string;
  kind: string;
  amount: string;
  organization_id: string | null;
  actor_kind: string;
  actor_id: string | null;
  request_id: string | null;
  reason: string | null;
  reverses_seq: string | null;
  metadata: Record<string, unknown>;
  created_at: Date;
  from_wallet_id: string | null;
  to_wallet_id: string | null;
}

/** Credit movements between wallets (not charges), newest first, touching `walletIds` (or all). */
export function movementsQuery(
  db: Knex,
  walletIds: string[] | "all",
  f: { walletId?: string; kind?: string },
): Knex.QueryBuilder {
  const q = db("ledger_transactions as t")
    .select(
      "t.seq",
      "t.id",
      "t.kind",
      "t.amount",
      "t.organization_id",
      "t.actor_kind",
      "t.actor_id",
      "t.request_id",
      "t.reason",
      "t.reverses_seq",
      "t.metadata",
      "t.created_at",
      db.raw(
        "(SELECT e.wallet_id FROM ledger_entries e WHERE e.txn_seq = t.seq AND e.amount < 0 ORDER BY e.id LIMIT 1) AS from_wallet_id",
      ),
      db.raw(
        "(SELECT e.wallet_id FROM ledger_entries e WHERE e.txn_seq = t.seq AND e.amount > 0 ORDER BY e.id LIMIT 1) AS to_wallet_id",
      ),
    )
    .whereIn("t.kind", f.kind ? [f.kind] : [...MOVEMENT_KINDS]);
  if (walletIds !== "all") q.whereIn("t.seq", db("ledger_entries").select("txn_seq").whereIn("wallet_id", walletIds));
  if (f.walletId) q.whereIn("t.seq", db("ledger_entries").select("txn_seq").where("wallet_id", f.walletId));
  return q.orderBy("t.seq", "desc");
}
