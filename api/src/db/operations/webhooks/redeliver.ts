import type { Knex } from "knex";

/**
 * Puts deliveries of an endpoint back in the queue for a fresh schedule: one event's (whatever its state,
 * unless an attempt is in flight), or every failed one created since a time. Answers how many.
 */
export async function redeliver(
  db: Knex,
  endpointId: string,
  which: { eventId: string } | { failedSince: Date },
): Promise<number> {
  const q = db("webhook_deliveries").where({ endpoint_id: endpointId });
  if ("eventId" in which) {
    q.where({ event_id: which.eventId }).where((w) =>
      w.whereNot({ state: "pending" }).orWhereNull("locked_until").orWhere("locked_until", "<=", db.fn.now()),
    );
  } else q.where({ state: "failed" }).where("created_at", ">=", which.failedSince);
  const n = await q.update({
    state: "pending",
    attempts: 0,
    next_attempt_at: db.fn.now(),
    locked_until: null,
    updated_at: db.fn.now(),
  });
  if (n > 0) await db.raw("SELECT pg_notify('berth_webhook_outbox', '')");
  return n;
}
