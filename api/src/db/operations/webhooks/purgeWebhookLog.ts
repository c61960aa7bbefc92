import type { Knex } from "knex";

/**
 * Drops the delivery log and settled events older than `before` (30 days by default), in batches so no
 * statement holds locks for long. Answers the rows removed.
 */
export async function purgeWebhookLog(db: Knex, before: Date, batch = 5000): Promise<number> {
  const attempts = (
    await db.raw(
      `DELETE FROM webhook_attempts WHERE id IN (SELECT id FROM webhook_attempts WHERE attempted_at < ? LIMIT ?)`,
      [before, batch],
    )
  ).rowCount as number;
  const events = (
    await db.raw(
      `DELETE FROM webhook_events WHERE id IN (
         SELECT ev.id FROM webhook_events ev WHERE ev.created_at < ?
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ev.id AND d.state = 'pending')
         LIMIT ?)`,
      [before, batch],
    )
  ).rowCount as number;
  return attempts + events;
}
