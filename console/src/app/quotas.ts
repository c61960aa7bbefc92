// Quotas: the limits in force for a scope, and the requests to raise them (asked, and decided in the inbox).
import type { BodyOf, QueryOf } from "../api/client.ts";
import { api } from "./context.ts";

/** No scope: the person's own limits, as the new-session wizard checks them. */
export function loadEffectiveLimits(scope: { organization?: string; project?: string } = {}, signal?: AbortSignal) {
  const query = scope.organization
    ? { organization_id: scope.organization, ...(scope.project ? { project_id: scope.project } : {}) }
    : {};
  return api.call("getEffectiveLimits", { query }, { signal });
}

export function loadMyQuotaRequests(signal?: AbortSignal) {
  return api.call("listQuotaRequests", { query: { box: "mine", size: 50 } }, { signal });
}

export function loadIncomingQuotaRequests(query: Omit<QueryOf<"listQuotaRequests">, "box">, signal?: AbortSignal) {
  return api.call("listQuotaRequests", { query: { ...query, box: "incoming" } }, { signal });
}

export function requestQuota(body: BodyOf<"createQuotaRequest">, idempotencyKey: string) {
  return api.call("createQuotaRequest", { body }, { idempotencyKey });
}

export function cancelQuotaRequest(requestId: string) {
  return api.call("cancelQuotaRequest", { params: { requestId } });
}

export function approveQuotaRequest(requestId: string, body: BodyOf<"approveQuotaRequest">, idempotencyKey: string) {
  return api.call("approveQuotaRequest", { params: { requestId }, body }, { idempotencyKey });
}

export function denyQuotaRequest(requestId: string, body: BodyOf<"denyQuotaRequest">, idempotencyKey: string) {
  return api.call("denyQuotaRequest", { params: { requestId }, body }, { idempotencyKey });
}
