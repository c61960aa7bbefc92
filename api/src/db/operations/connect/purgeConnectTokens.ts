import type { Knex } from "knex";

/** Deletes up to `limit` tokens that expired before `before` (redeemed or not); returns how many. */
export async function purgeConnectTokens(db: Knex, before: Date, limit = 500): Promise<number> {
  const r = await db.raw(
    `DELETE FROM connect_tokens WHERE ctid IN (
       SELECT ctid FROM connect_tokens WHERE expires_at < ? LIMIT ?
     )`,
    [before, limit],
  );
  return (r as { rowCount: number }).rowCount;
}
