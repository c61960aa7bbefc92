import type { Knex } from "knex";

/** What an organization's sessions were charged since `from` (budgets): the sum of its charges. */
export async function organizationSpend(db: Knex, organizationId: string, from: Date): Promise<bigint> {
  const row = (await db("ledger_transactions")
    .where({ kind: "charge", organization_id: organizationId })
    .where("created_at", ">=", from)
    .first(db.raw("coalesce(sum(amount), 0)::text AS spent"))) as { spent: string } | undefined;
  return BigInt(row?.spent ?? "0");
}

/** What a wallet paid for usage since `from` (its daily and monthly limits). */
export async function walletSpend(db: Knex, walletId: string, from: Date): Promise<bigint> {
  const row = (await db("ledger_entries as e")
    .join("ledger_transactions as t", "t.seq", "e.txn_seq")
    .where({ "e.wallet_id": walletId, "t.kind": "charge" })
    .where("t.created_at", ">=", from)
    .first(db.raw("coalesce(-sum(e.amount), 0)::text AS spent"))) as { spent: string } | undefined;
  return BigInt(row?.spent ?? "0");
}
