// /api/v1/webhooks: an organization's outbound webhooks (docs/dev/webhooks.md). Its org_admins and
// super_admins manage them; the secret is answered only by create and rotate.
import { z } from "zod";
import { Paged } from "../../db/paging.ts";
import { listAttempts, listDeliveries, ping, redeliver } from "../../domain/webhooks/deliveries.ts";
import {
  changeEndpoint,
  createEndpoint,
  getEndpoint,
  listEndpoints,
  removeEndpoint,
  rotateSecret,
} from "../../domain/webhooks/endpoints.ts";
import { WEBHOOK_EVENT_DESCRIPTIONS, WEBHOOK_EVENT_TYPES } from "../../domain/webhooks/eventTypes.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentAttempt, presentDelivery, presentWebhook, presentWebhookWithSecret } from "./presenter.ts";
import {
  CreateWebhookBody,
  ListAttemptsQuery,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  PingResult,
  RedeliverBody,
  RedeliverResult,
  RotateSecretBody,
  UpdateWebhookBody,
  Webhook,
  WebhookAttempt,
  WebhookDelivery,
  WebhookEventTypes,
  WebhookParams,
  WebhookWithSecret,
} from "./schemas.ts";

const TAGS = ["webhooks"];

export const listWebhookEventTypes = defineRoute({
  method: "get",
  path: "/api/v1/webhooks/event-types",
  operationId: "listWebhookEventTypes",
  tags: TAGS,
  summary: "The event kinds an endpoint may subscribe to",
  auth: "user",
  responses: { 200: WebhookEventTypes },
  handler: async (_) => ({
    status: 200,
    body: { data: WEBHOOK_EVENT_TYPES.map((type) => ({ type, description: WEBHOOK_EVENT_DESCRIPTIONS[type] })) },
  }),
});

export const listWebhooks = defineRoute({
  method: "get",
  path: "/api/v1/webhooks",
  operationId: "listWebhooks",
  tags: TAGS,
  summary: "Webhook endpoints of the organizations you administer (super_admins: all)",
  auth: "user",
  query: ListWebhooksQuery,
  responses: { 200: Paged(Webhook) },
  handler: async ({ deps, principal, query }) => {
    const page = await listEndpoints(deps, principal, {
      page: query.page,
      size: query.size,
      organizationId: query.organization_id,
    });
    const now = deps.clock.now();
    return { status: 200, body: { data: page.data.map((e) => presentWebhook(e, now)), pagination: page.pagination } };
  },
});

export const createWebhook = defineRoute({
  method: "post",
  path: "/api/v1/webhooks",
  operationId: "createWebhook",
  tags: TAGS,
  summary: "Add a webhook endpoint to an organization (at most 10); the answer shows its secret once",
  description:
    "Deliveries follow Standard Webhooks: headers `webhook-id`, `webhook-timestamp`, `webhook-signature` (`v1,<base64 HMAC-SHA256 of id.timestamp.body>` with the secret's base64 key after `whsec_`). Refused: 400 `webhook_url_invalid` (unparsable, not https, credentials), 422 `webhook_target_forbidden` (an internal address), 409 `webhook_limit_reached`.",
  auth: "user",
  body: CreateWebhookBody,
  idempotent: true,
  audit: "webhook.create",
  errors: ["not_found", "webhook_limit_reached", "webhook_url_invalid", "webhook_target_forbidden"],
  responses: { 201: WebhookWithSecret },
  handler: async ({ deps, principal, body, audit }) => {
    if (body.organization_id) audit.organization(body.organization_id);
    const e = await createEndpoint(deps, principal, {
      organizationId: body.organization_id,
      url: body.url,
      description: body.description,
      eventTypes: body.event_types,
    });
    audit.organization(e.endpoint.organization_id);
    audit.target("webhook", e.endpoint.id);
    return { status: 201, body: presentWebhookWithSecret(e.endpoint, e.secret, deps.clock.now()) };
  },
});

export const getWebhook = defineRoute({
  method: "get",
  path: "/api/v1/webhooks/:webhookId",
  operationId: "getWebhook",
  tags: TAGS,
  summary: "A webhook endpoint (without its secret)",
  auth: "user",
  params: WebhookParams,
  responses: { 200: Webhook },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentWebhook(await getEndpoint(deps, principal, params.webhookId), deps.clock.now()),
  }),
});

export const updateWebhook = defineRoute({
  method: "patch",
  path: "/api/v1/webhooks/:webhookId",
  operationId: "updateWebhook",
  tags: TAGS,
  summary: "Change a webhook endpoint's URL, description, event kinds, or enable/disable it",
  auth: "user",
  params: WebhookParams,
  body: UpdateWebhookBody,
  audit: "webhook.update",
  errors: ["webhook_url_invalid", "webhook_target_forbidden"],
  responses: { 200: Webhook },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("webhook", params.webhookId);
    const e = await changeEndpoint(deps, principal, params.webhookId, {
      url: body.url,
      description: body.description,
      eventTypes: body.event_types,
      enabled: body.enabled,
    });
    audit.organization(e.organization_id);
    return { status: 200, body: presentWebhook(e, deps.clock.now()) };
  },
});

export const deleteWebhook = defineRoute({
  method: "delete",
  path: "/api/v1/webhooks/:webhookId",
  operationId: "deleteWebhook",
  tags: TAGS,
  summary: "Delete a webhook endpoint with its deliveries and their log",
  auth: "user",
  params: WebhookParams,
  audit: "webhook.delete",
  responses: { 204: z.null() },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("webhook", params.webhookId);
    const e = await removeEndpoint(deps, principal, params.webhookId);
    audit.organization(e.organization_id);
    return { status: 204, body: null };
  },
});

export const rotateWebhookSecret = defineRoute({
  method: "post",
  path: "/api/v1/webhooks/:webhookId/rotate-secret",
  operationId: "rotateWebhookSecret",
  tags: TAGS,
  summary: "Make a new secret (shown once); the old one keeps signing beside it for the overlap",
  auth: "user",
  params: WebhookParams,
  body: RotateSecretBody,
  audit: "webhook.rotate_secret",
  responses: { 200: WebhookWithSecret },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("webhook", params.webhookId);
    const e = await rotateSecret(deps, principal, params.webhookId, body.overlap_seconds);
    audit.organization(e.endpoint.organization_id);
    return { status: 200, body: presentWebhookWithSecret(e.endpoint, e.secret, deps.clock.now()) };
  },
});

export const listWebhookDeliveries = defineRoute({
  method: "get",
  path: "/api/v1/webhooks/:webhookId/deliveries",
  operationId: "listWebhookDeliveries",
  tags: TAGS,
  summary: "An endpoint's deliveries (one per event), newest first",
  auth: "user",
  params: WebhookParams,
  query: ListDeliveriesQuery,
  responses: { 200: Paged(WebhookDelivery) },
  handler: async ({ deps, principal, params, query }) => {
    const page = await listDeliveries(deps, principal, params.webhookId, query);
    return { status: 200, body: { data: page.data.map(presentDelivery), pagination: page.pagination } };
  },
});

export const listWebhookAttempts = defineRoute({
  method: "get",
  path: "/api/v1/webhooks/:webhookId/attempts",
  operationId: "listWebhookAttempts",
  tags: TAGS,
  summary: "An endpoint's delivery log: every attempt with status, latency, response code and answer (30 days)",
  auth: "user",
  params: WebhookParams,
  query: ListAttemptsQuery,
  responses: { 200: Paged(WebhookAttempt) },
  handler: async ({ deps, principal, params, query }) => {
    const page = await listAttempts(deps, principal, params.webhookId, {
      page: query.page,
      size: query.size,
      eventId: query.event_id,
    });
    return { status: 200, body: { data: page.data.map(presentAttempt), pagination: page.pagination } };
  },
});

export const redeliverWebhook = defineRoute({
  method: "post",
  path: "/api/v1/webhooks/:webhookId/redeliver",
  operationId: "redeliverWebhook",
  tags: TAGS,
  summary: "Send one event again, or every delivery that failed since a time",
  auth: "user",
  params: WebhookParams,
  body: RedeliverBody,
  audit: "webhook.redeliver",
  responses: { 202: RedeliverResult },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("webhook", params.webhookId);
    const which = "event_id" in body ? { eventId: body.event_id } : { failedSince: new Date(body.failed_since) };
    const requeued = await redeliver(deps, principal, params.webhookId, which);
    audit.detail("requeued", requeued);
    return { status: 202, body: { requeued } };
  },
});

export const pingWebhook = defineRoute({
  method: "post",
  path: "/api/v1/webhooks/:webhookId/test",
  operationId: "pingWebhook",
  tags: TAGS,
  summary: "Send a `webhook.test` event to this endpoint now (see it in the delivery log)",
  auth: "user",
  params: WebhookParams,
  audit: "webhook.test",
  responses: { 202: PingResult },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("webhook", params.webhookId);
    return { status: 202, body: { event_id: await ping(deps, principal, params.webhookId) } };
  },
});

export const routes: RouteDef[] = [
  listWebhookEventTypes,
  listWebhooks,
  createWebhook,
  getWebhook,
  updateWebhook,
  deleteWebhook,
  rotateWebhookSecret,
  listWebhookDeliveries,
  listWebhookAttempts,
  redeliverWebhook,
  pingWebhook,
];
