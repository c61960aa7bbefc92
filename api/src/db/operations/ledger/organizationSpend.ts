import type { Knex } from "knex";

/** What an organization's sessions were charged since `from` (budgets): the sum of its charges. */
export async function organizationSpend(db: Knex, organizationId: string, from: Date): Promise<bigint> {
  const row = (await db("ledger_transactions")
    .where({ kind: "charge", organization_id: organizationId })
    .where("created_at", ">=", from)
    .first(db.raw("coalesce(sum(amount), 0)::text AS spent"))) as { spent: string } | undefined;
  return BigInt(row?.spent ?? "0");
}

/**
 * What each wallet paid for usage since the start of the day and of the month (its daily and monthly
 * limits), by charging time. The month starts no later than the day, so one scan from it answers both;
 * wallets that paid nothing are absent.
 */
export async function walletsSpend(
  db: Knex,
  walletIds: readonly string[],
  from: { day: Date; month: Date },
): Promise<Map<string, { day: bigint; month: bigint }>> {
  if (walletIds.length === 0) return new Map();
  const r = (await db.raw(
    `SELECT e.wallet_id,
            coalesce(-sum(e.amount) FILTER (WHERE t.created_at >= ?), 0)::text AS day,
            coalesce(-sum(e.amount), 0)::text AS month
       FROM ledger_entries e JOIN ledger_transactions t ON t.seq = e.txn_seq
      WHERE e.wallet_id = ANY(?::text[]) AND t.kind = 'charge' AND t.created_at >= ?
      GROUP BY e.wallet_id`,
    [from.day, [...new Set(walletIds)], from.month],
  )) as { rows: { wallet_id: string; day: string; month: string }[] };
  return new Map(r.rows.map((x) => [x.wallet_id, { day: BigInt(x.day), month: BigInt(x.month) }]));
}
