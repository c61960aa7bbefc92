import type { Knex } from "knex";

/** An endpoint's deliveries with their event, newest first; for paginate(). */
export function deliveriesQuery(db: Knex, endpointId: string, state?: string): Knex.QueryBuilder {
  const q = db("webhook_deliveries as d")
    .join("webhook_events as ev", "ev.id", "d.event_id")
    .where("d.endpoint_id", endpointId)
    .select(
      db.raw("d.id::text AS id"),
      "d.event_id",
      "ev.type as event_type",
      "d.state",
      "d.attempts",
      "d.next_attempt_at",
      "d.last_attempt_at",
      "d.last_status_code",
      "d.last_error",
      "d.created_at",
    )
    .orderBy([
      { column: "d.created_at", order: "desc" },
      { column: "d.id", order: "desc" },
    ]);
  if (state !== undefined) q.where("d.state", state);
  return q;
}

/** An endpoint's delivery log (one row per attempt), newest first; for paginate(). */
export function attemptsQuery(db: Knex, endpointId: string, eventId?: string): Knex.QueryBuilder {
  const q = db("webhook_attempts as a")
    .join("webhook_events as ev", "ev.id", "a.event_id")
    .where("a.endpoint_id", endpointId)
    .select(
      db.raw("a.id::text AS id"),
      db.raw("a.delivery_id::text AS delivery_id"),
      "a.event_id",
      "ev.type as event_type",
      "a.attempt",
      "a.attempted_at",
      "a.outcome",
      "a.status_code",
      "a.response_body",
      "a.error",
      "a.latency_ms",
    )
    .orderBy([
      { column: "a.attempted_at", order: "desc" },
      { column: "a.id", order: "desc" },
    ]);
  if (eventId !== undefined) q.where("a.event_id", eventId);
  return q;
}
