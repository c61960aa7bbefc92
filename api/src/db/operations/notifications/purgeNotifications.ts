import type { Knex } from "knex";

/** Deletes up to `limit` notifications created before `before` (retention: 90 days by default). */
export async function purgeNotifications(db: Knex, before: Date, limit: number): Promise<number> {
  const r = await db.raw(
    `DELETE FROM notifications WHERE id IN (SELECT id FROM notifications WHERE created_at < ? ORDER BY created_at LIMIT ?)`,
    [before, limit],
  );
  return r.rowCount as number;
}
