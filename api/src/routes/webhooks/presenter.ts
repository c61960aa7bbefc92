import type { z } from "zod";
import type { WebhookEndpointRow } from "../../db/operations/webhooks/types.ts";
import type { AttemptView, DeliveryView } from "../../domain/webhooks/deliveries.ts";
import type { Webhook, WebhookAttempt, WebhookDelivery, WebhookWithSecret } from "./schemas.ts";

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

export function presentWebhook(e: WebhookEndpointRow, now: Date): z.input<typeof Webhook> {
  const rotating = e.previous_secret_expires_at !== null && new Date(e.previous_secret_expires_at) > now;
  return {
    id: e.id,
    organization_id: e.organization_id,
    url: e.url,
    description: e.description,
    event_types: e.event_types,
    enabled: e.enabled,
    disabled_reason: e.disabled_reason as "gone" | "failing" | "manual" | null,
    disabled_at: iso(e.disabled_at),
    failing_since: iso(e.failing_since),
    secret_rotation_ends_at: rotating ? iso(e.previous_secret_expires_at) : null,
    created_by: e.created_by,
    created_at: iso(e.created_at) as string,
    updated_at: iso(e.updated_at) as string,
  };
}

/** Only the create and rotate answers carry the secret (the stored one is sealed). */
export function presentWebhookWithSecret(
  e: WebhookEndpointRow,
  secret: string,
  now: Date,
): z.input<typeof WebhookWithSecret> {
  return { ...presentWebhook(e, now), secret };
}

export function presentDelivery(d: DeliveryView): z.input<typeof WebhookDelivery> {
  return {
    id: d.id,
    event_id: d.event_id,
    event_type: d.event_type,
    state: d.state as "pending" | "succeeded" | "failed",
    attempts: d.attempts,
    next_attempt_at: d.state === "pending" ? iso(d.next_attempt_at) : null,
    last_attempt_at: iso(d.last_attempt_at),
    last_status_code: d.last_status_code,
    last_error: d.last_error,
    created_at: iso(d.created_at) as string,
  };
}

export function presentAttempt(a: AttemptView): z.input<typeof WebhookAttempt> {
  return {
    id: a.id,
    delivery_id: a.delivery_id,
    event_id: a.event_id,
    event_type: a.event_type,
    attempt: a.attempt,
    attempted_at: iso(a.attempted_at) as string,
    outcome: a.outcome as "succeeded" | "failed",
    status_code: a.status_code,
    response_body: a.response_body,
    error: a.error,
    latency_ms: a.latency_ms,
  };
}
