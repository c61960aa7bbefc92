// Webhook endpoints, the event kinds they may subscribe to, and their deliveries.
import { type BodyOf, newIdempotencyKey } from "../api/client.ts";
import { api } from "./context.ts";

export function loadWebhooks(signal?: AbortSignal) {
  return api.call("listWebhooks", { query: { size: 100 } }, { signal });
}

export function loadWebhookEventTypes(signal?: AbortSignal) {
  return api.call("listWebhookEventTypes", {}, { signal });
}

export function loadWebhookDeliveries(webhookId: string, signal?: AbortSignal) {
  return api.call("listWebhookDeliveries", { params: { webhookId }, query: { size: 50 } }, { signal });
}

export function createWebhook(body: BodyOf<"createWebhook">) {
  return api.call("createWebhook", { body }, { idempotencyKey: newIdempotencyKey() });
}

export function rotateWebhookSecret(webhookId: string) {
  return api.call("rotateWebhookSecret", { params: { webhookId }, body: {} });
}

export function deleteWebhook(webhookId: string) {
  return api.call("deleteWebhook", { params: { webhookId } });
}

export function pingWebhook(webhookId: string) {
  return api.call("pingWebhook", { params: { webhookId } });
}

export function setWebhookEnabled(webhookId: string, enabled: boolean) {
  return api.call("updateWebhook", { params: { webhookId }, body: { enabled } });
}

export function redeliverWebhook(webhookId: string, eventId: string) {
  return api.call("redeliverWebhook", { params: { webhookId }, body: { event_id: eventId } });
}
