import type { Knex } from "knex";
import type { ClaimedDelivery } from "./types.ts";

/**
 * Claims due deliveries for one attempt each: the claim is `locked_until` (a crashed dispatcher's claim
 * lapses and another takes the delivery again, so nothing is lost; the receiver dedupes by webhook-id).
 * Within an endpoint a delivery waits for every earlier pending one of its ordering key (a session's
 * events go out in order), and at most `perEndpoint` are in flight. The UPDATE re-checks the claim under
 * the row lock, so two dispatchers never hold the same delivery.
 */
export async function claimDeliveries(
  db: Knex,
  o: { limit: number; perEndpoint: number; leaseMs: number },
): Promise<ClaimedDelivery[]> {
  const claimed = (
    await db.raw(
      `WITH busy AS (
         SELECT endpoint_id, count(*) AS n FROM webhook_deliveries
         WHERE state = 'pending' AND locked_until > now() GROUP BY endpoint_id
       ), candidates AS (
         SELECT d.id, d.endpoint_id, row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.id) AS rn
         FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled
         WHERE d.state = 'pending' AND d.next_attempt_at <= now()
           AND (d.locked_until IS NULL OR d.locked_until <= now())
           AND NOT EXISTS (
             SELECT 1 FROM webhook_deliveries p
             WHERE p.endpoint_id = d.endpoint_id AND p.ordering_key = d.ordering_key AND p.state = 'pending'
               AND p.id < d.id)
       ), chosen AS (
         SELECT c.id FROM candidates c LEFT JOIN busy b ON b.endpoint_id = c.endpoint_id
         WHERE c.rn + coalesce(b.n, 0) <= ? ORDER BY c.id LIMIT ?
       )
       UPDATE webhook_deliveries w
       SET locked_until = now() + make_interval(secs => ? / 1000.0), attempts = w.attempts + 1, updated_at = now()
       FROM chosen
       WHERE w.id = chosen.id AND w.state = 'pending' AND (w.locked_until IS NULL OR w.locked_until <= now())
       RETURNING w.id`,
      [o.perEndpoint, o.limit, o.leaseMs],
    )
  ).rows as { id: string }[];
  if (claimed.length === 0) return [];
  const rows = (
    await db.raw(
      `SELECT d.id::text AS id, d.attempts, d.event_id, ev.type AS event_type, ev.payload, d.endpoint_id,
              e.organization_id, e.url, e.secret, e.previous_secret, e.previous_secret_expires_at
       FROM webhook_deliveries d
       JOIN webhook_events ev ON ev.id = d.event_id
       JOIN webhook_endpoints e ON e.id = d.endpoint_id
       WHERE d.id = ANY (?::bigint[]) ORDER BY d.id`,
      [claimed.map((c) => c.id)],
    )
  ).rows as ClaimedDelivery[];
  return rows;
}
