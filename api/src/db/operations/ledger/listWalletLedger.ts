import type { Knex } from "knex";
import type { WalletLedgerLine } from "./types.ts";

export interface LedgerFilter {
  from?: Date;
  to?: Date;
  kinds?: string[];
}

/**
 * A wallet's ledger lines, newest first, each with the wallet's balance after it (a running sum in
 * sequence order over the whole history, filtered afterwards so the balances stay true).
 */
export function walletLedgerQuery(db: Knex, walletId: string, f: LedgerFilter): Knex.QueryBuilder {
  const lines = db("ledger_entries as e")
    .join("ledger_transactions as t", "t.seq", "e.txn_seq")
    .where("e.wallet_id", walletId)
    .select(
      "t.*",
      "e.amount as entry_amount",
      db.raw("(sum(e.amount) OVER (ORDER BY e.txn_seq, e.id))::text AS balance_after"),
      "e.id as entry_id",
    );
  const q = db.select("*").from(lines.as("l"));
  if (f.from) q.where("created_at", ">=", f.from);
  if (f.to) q.where("created_at", "<", f.to);
  if (f.kinds && f.kinds.length > 0) q.whereIn("kind", f.kinds);
  return q.orderBy([
    { column: "seq", order: "desc" },
    { column: "entry_id", order: "desc" },
  ]);
}

/** The same lines in pages of `size`, one query each (node-postgres streams need another package). */
export async function* walletLedgerPages(
  db: Knex,
  walletId: string,
  f: LedgerFilter,
  size = 2_000,
): AsyncGenerator<WalletLedgerLine[]> {
  for (let offset = 0; ; offset += size) {
    const rows = (await walletLedgerQuery(db, walletId, f).limit(size).offset(offset)) as WalletLedgerLine[];
    if (rows.length > 0) yield rows;
    if (rows.length < size) return;
  }
}
