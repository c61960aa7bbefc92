import { z } from "zod";
import { Page } from "../../db/paging.ts";
import { WEBHOOK_EVENT_TYPES } from "../../domain/webhooks/eventTypes.ts";

const Timestamp = z.string().meta({ description: "RFC 3339, UTC." });
const Id = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/);

export const WebhookParams = z.object({ webhookId: Id });

const EventTypes = z
  .array(z.enum(WEBHOOK_EVENT_TYPES))
  .max(WEBHOOK_EVENT_TYPES.length * 2)
  .meta({ description: "Event kinds to receive; empty: every kind. Unknown kinds are refused." });

/** Checked by domain/webhooks/ssrf.ts (webhook_url_invalid names why); the document states the shape. */
const WebhookUrl = z.string().min(1).max(2048).meta({ format: "uri", pattern: "^https://[^/?#@\\s]+" });

export const CreateWebhookBody = z
  .object({
    organization_id: Id.optional().meta({
      description: "Required unless the caller administers exactly one organization.",
    }),
    url: WebhookUrl.meta({ description: "https only; its host must not be internal." }),
    description: z.string().max(500).optional(),
    event_types: EventTypes.default([]),
  })
  .strict()
  .meta({ id: "WebhookCreate" });

export const UpdateWebhookBody = z
  .object({
    url: WebhookUrl.optional(),
    description: z.string().max(500).optional(),
    event_types: EventTypes.optional(),
    enabled: z.boolean().optional(),
  })
  .strict()
  .meta({ id: "WebhookUpdate" });

export const RotateSecretBody = z
  .object({
    overlap_seconds: z
      .number()
      .int()
      .min(0)
      .max(7 * 86_400)
      .optional()
      .meta({ description: "How long the old secret keeps signing beside the new one (default 86400)." }),
  })
  .strict()
  .meta({ id: "WebhookRotate" });

export const RedeliverBody = z
  .union([z.object({ event_id: Id }).strict(), z.object({ failed_since: z.iso.datetime({ offset: true }) }).strict()])
  .meta({ id: "WebhookRedeliver", description: "One event again, or every failed delivery created since a time." });

export const ListWebhooksQuery = Page.extend({ organization_id: Id.optional() });
export const ListDeliveriesQuery = Page.extend({ state: z.enum(["pending", "succeeded", "failed"]).optional() });
export const ListAttemptsQuery = Page.extend({ event_id: Id.optional() });

export const Webhook = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    url: z.string(),
    description: z.string(),
    event_types: z.array(z.string()),
    enabled: z.boolean(),
    disabled_reason: z
      .enum(["gone", "failing", "manual"])
      .nullable()
      .meta({ description: "gone: the receiver answered 410; failing: it failed for 5 days; manual." }),
    disabled_at: Timestamp.nullable(),
    failing_since: Timestamp.nullable(),
    secret_rotation_ends_at: Timestamp.nullable().meta({
      description: "Until then the previous secret signs too.",
    }),
    created_by: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "Webhook" });

export const WebhookWithSecret = Webhook.extend({
  secret: z.string().meta({ description: "whsec_…: shown only in this answer; keep it." }),
}).meta({ id: "WebhookWithSecret" });

export const WebhookEventTypes = z
  .object({ data: z.array(z.object({ type: z.string(), description: z.string() })) })
  .meta({ id: "WebhookEventTypes" });

export const WebhookDelivery = z
  .object({
    id: z.string(),
    event_id: z.string().meta({ description: "The webhook-id header." }),
    event_type: z.string(),
    state: z.enum(["pending", "succeeded", "failed"]),
    attempts: z.number().int(),
    next_attempt_at: Timestamp.nullable(),
    last_attempt_at: Timestamp.nullable(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created_at: Timestamp,
  })
  .meta({ id: "WebhookDelivery" });

export const WebhookAttempt = z
  .object({
    id: z.string(),
    delivery_id: z.string(),
    event_id: z.string(),
    event_type: z.string(),
    attempt: z.number().int(),
    attempted_at: Timestamp,
    outcome: z.enum(["succeeded", "failed"]),
    status_code: z.number().int().nullable(),
    response_body: z.string().nullable().meta({ description: "The first 4 KiB of the answer." }),
    error: z.string().nullable(),
    latency_ms: z.number().int(),
  })
  .meta({ id: "WebhookAttempt" });

export const RedeliverResult = z.object({ requeued: z.number().int() }).meta({ id: "WebhookRedeliverResult" });
export const PingResult = z.object({ event_id: z.string() }).meta({ id: "WebhookPingResult" });
