import type { Knex } from "knex";

export interface AttemptOutcome {
  deliveryId: string;
  endpointId: string;
  eventId: string;
  attempt: number;
  at: Date;
  ok: boolean;
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
  latencyMs: number;
  /** Failed: when to try again, or null when the schedule is spent (the delivery is failed). */
  retryInMs: number | null;
  /** Disable the endpoint (410 Gone, or failing for too long) with this reason. */
  disable: "gone" | "failing" | null;
}

/** Records one attempt in the log and settles the delivery and its endpoint's health, in one transaction. */
export async function finishDelivery(db: Knex, o: AttemptOutcome): Promise<void> {
  await db.transaction(async (trx) => {
    await trx("webhook_attempts").insert({
      delivery_id: o.deliveryId,
      endpoint_id: o.endpointId,
      event_id: o.eventId,
      attempt: o.attempt,
      attempted_at: o.at,
      outcome: o.ok ? "succeeded" : "failed",
      status_code: o.statusCode,
      response_body: o.responseBody,
      error: o.error,
      latency_ms: o.latencyMs,
    });
    const state = o.ok ? "succeeded" : o.retryInMs === null ? "failed" : "pending";
    await trx.raw(
      `UPDATE webhook_deliveries SET state = ?, locked_until = NULL, last_attempt_at = ?, last_status_code = ?,
         last_error = ?, next_attempt_at = CASE WHEN ?::text = 'pending' THEN now() + make_interval(secs => ?::float8 / 1000.0) ELSE next_attempt_at END,
         updated_at = now()
       WHERE id = ? AND state = 'pending'`,
      [state, o.at, o.statusCode, o.error, state, o.retryInMs ?? 0, o.deliveryId],
    );
    if (o.ok) {
      await trx("webhook_endpoints")
        .where({ id: o.endpointId })
        .whereNotNull("failing_since")
        .update({ failing_since: null });
    } else {
      await trx("webhook_endpoints")
        .where({ id: o.endpointId })
        .whereNull("failing_since")
        .update({ failing_since: o.at });
    }
    if (o.disable !== null) {
      await trx("webhook_endpoints")
        .where({ id: o.endpointId, enabled: true })
        .update({ enabled: false, disabled_reason: o.disable, disabled_at: o.at, updated_at: o.at });
    }
  });
}
