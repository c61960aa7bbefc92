import type { Knex } from "knex";

/** Gigabytes of live volumes of one owner (a user's own, or a project's). */
export async function provisionedByOwner(db: Knex, kind: "user" | "project", id: string): Promise<number> {
  const r = await db("volumes")
    .where({ owner_kind: kind, owner_id: id })
    .whereNull("deleted_at")
    .sum<{ sum: string | null }>("size_gb as sum")
    .first();
  return Number(r?.sum ?? 0);
}

/**
 * Gigabytes and count of the volumes whose data is on each pool at `now`: live ones and deleted ones
 * still in their grace period (pools absent from the answer hold none).
 */
export async function provisionedByPool(db: Knex, now: Date): Promise<Map<string, { gb: number; volumes: number }>> {
  const rows = await db("volumes")
    .where((w) => w.whereNull("deleted_at").orWhere("purge_after", ">", now))
    .groupBy("pool")
    .select("pool")
    .select(db.raw("sum(size_gb)::int as gb"), db.raw("count(*)::int as n"));
  return new Map(
    (rows as { pool: string; gb: number; n: number }[]).map((r) => [
      r.pool,
      { gb: Number(r.gb), volumes: Number(r.n) },
    ]),
  );
}

/**
 * Serializes the writes that add to an owner's and a pool's gigabytes for the transaction: two creates
 * cannot both pass a quota or a pool's free space that only one fits in.
 */
export async function lockVolumeTotals(tx: Knex.Transaction, ownerKind: string, ownerId: string, pool: string) {
  // Pool first, then owner: every writer takes them in this order.
  await tx.raw("SELECT pg_advisory_xact_lock(hashtext(?))", [`volumes/pool/${pool}`]);
  await tx.raw("SELECT pg_advisory_xact_lock(hashtext(?))", [`volumes/owner/${ownerKind}/${ownerId}`]);
}

/** The pool's lock alone: a pool's deletion waits for creates on it to finish, and they for it. */
export async function lockPoolVolumes(tx: Knex.Transaction, pool: string) {
  await tx.raw("SELECT pg_advisory_xact_lock(hashtext(?))", [`volumes/pool/${pool}`]);
}
