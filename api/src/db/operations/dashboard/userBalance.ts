import type { Knex } from "knex";

/** Balance (minor units) of a user's own wallets, over every organization they are in. */
export async function userBalance(db: Knex, userId: string, organizationIds: readonly string[]): Promise<bigint> {
  if (organizationIds.length === 0) return 0n;
  const r = await db("wallets as w")
    .where({ "w.owner_kind": "user", "w.owner_id": userId })
    .whereIn("w.organization_id", [...organizationIds])
    .select(
      db.raw(
        "coalesce(sum(coalesce(w.balance, (select coalesce(sum(e.amount), 0) from ledger_entries e where e.wallet_id = w.id))), 0)::text as balance",
      ),
    )
    .first();
  return BigInt(r?.balance ?? "0");
}
