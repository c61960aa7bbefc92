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

/**
 * Records one attempt in the log and settles the delivery and its endpoint's health, in one transaction.
 * The delivery is settled only while no later claim took it (its attempts are still this attempt's): a
 * late settle must not end a delivery another dispatcher is sending again.
 */
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
       WHERE id = ? AND state = 'pending' AND attempts = ?`,
      [state, o.at, o.statusCode, o.error, state, o.retryInMs ?? 0, o.deliveryId, o.attempt],
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
      const disabled = (await trx("webhook_endpoints")
        .where({ id: o.endpointId, enabled: true })
        .update({ enabled: false, disabled_reason: o.disable, disabled_at: o.at, updated_at: o.at })
        .returning(["organization_id", "url"])) as { organization_id: string; url: string }[];
      // The organization's admins hear of it on their bell (the `notifications` table), once per disabling.
      const e = disabled[0];
      if (e) {
        const why =
          o.disable === "gone" ? "it answered 410 Gone" : "its deliveries have failed for 5 days without a success";
        await trx.raw(
          `INSERT INTO notifications (user_id, organization_id, kind, title, body, data, created_at)
           SELECT m.user_id, m.organization_id, 'webhook.endpoint_disabled', 'A webhook endpoint was disabled',
                  ?, ?::jsonb, ?
           FROM memberships m
           WHERE m.organization_id = ? AND m.project_id IS NULL AND m.role = 'org_admin'`,
          [
            `Berth stopped sending to ${e.url}: ${why}. Enable it again once it answers.`,
            JSON.stringify({ webhook_id: o.endpointId, url: e.url, reason: o.disable }),
            o.at,
            e.organization_id,
          ],
        );
      }
    }
  });
}
