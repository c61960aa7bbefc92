import type { Knex } from "knex";

/** A test event for one endpoint (whatever its filter), with its delivery; wakes the dispatcher. */
export async function insertPing(
  db: Knex,
  o: {
    eventId: string;
    endpointId: string;
    organizationId: string;
    type: string;
    data: Record<string, unknown>;
    at: Date;
  },
): Promise<void> {
  await db.transaction(async (trx) => {
    await trx("webhook_events").insert({
      id: o.eventId,
      organization_id: o.organizationId,
      type: o.type,
      payload: JSON.stringify({ type: o.type, timestamp: o.at.toISOString(), data: o.data }),
      ordering_key: null,
      source: "ping",
      created_at: o.at,
    });
    await trx("webhook_deliveries").insert({ event_id: o.eventId, endpoint_id: o.endpointId, ordering_key: null });
    await trx.raw("SELECT pg_notify('berth_webhook_outbox', '')");
  });
}
