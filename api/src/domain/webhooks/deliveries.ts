// The delivery log, manual redelivery and the test ping of an endpoint (its admins only).
import { randomUUID } from "node:crypto";
import { insertPing } from "../../db/operations/webhooks/insertPing.ts";
import { attemptsQuery, deliveriesQuery } from "../../db/operations/webhooks/listDeliveries.ts";
import { redeliver as redeliverRows } from "../../db/operations/webhooks/redeliver.ts";
import { paginate } from "../../db/paging.ts";
import type { Deps } from "../../deps.ts";
import { NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { endpointFor } from "./access.ts";
import { WEBHOOK_PING } from "./eventTypes.ts";

type D = Pick<Deps, "db" | "clock">;

export interface DeliveryView {
  id: string;
  event_id: string;
  event_type: string;
  state: string;
  attempts: number;
  next_attempt_at: Date;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
}

export interface AttemptView {
  id: string;
  delivery_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  attempted_at: Date;
  outcome: string;
  status_code: number | null;
  response_body: string | null;
  error: string | null;
  latency_ms: number;
}

export async function listDeliveries(
  deps: D,
  p: Principal,
  id: string,
  q: { page: number; size: number; state?: string | undefined },
) {
  await endpointFor(deps, p, id);
  return paginate(deps.db, deliveriesQuery(deps.db, id, q.state), q, (r: DeliveryView) => r);
}

export async function listAttempts(
  deps: D,
  p: Principal,
  id: string,
  q: { page: number; size: number; eventId?: string | undefined },
) {
  await endpointFor(deps, p, id);
  return paginate(deps.db, attemptsQuery(deps.db, id, q.eventId), q, (r: AttemptView) => r);
}

/** One event again (404 when the endpoint never had it), or every failed delivery since a time. */
export async function redeliver(
  deps: D,
  p: Principal,
  id: string,
  which: { eventId: string } | { failedSince: Date },
): Promise<number> {
  await endpointFor(deps, p, id);
  const n = await redeliverRows(deps.db, id, which);
  if ("eventId" in which && n === 0) {
    const known = await deps.db("webhook_deliveries").where({ endpoint_id: id, event_id: which.eventId }).first("id");
    if (!known) throw new NotFound("webhook event", which.eventId);
  }
  return n;
}

/** Sends a `webhook.test` event to this endpoint alone; answers its id (find it in the delivery log). */
export async function ping(deps: D, p: Principal, id: string): Promise<string> {
  const e = await endpointFor(deps, p, id);
  const eventId = `msg_${randomUUID().replaceAll("-", "")}`;
  await insertPing(deps.db, {
    eventId,
    endpointId: e.id,
    organizationId: e.organization_id,
    type: WEBHOOK_PING,
    data: { endpoint_id: e.id, organization_id: e.organization_id, message: "a test event sent on request" },
    at: deps.clock.now(),
  });
  return eventId;
}
