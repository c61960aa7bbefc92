// Quota-increase requests and effective limits, under /api/v1/resource-policies (the contract puts
// quota-increase requests there). Registered before the catalog's /resource-policies/:name, so the
// names `requests` and `effective` are these routes, never a policy's.

import { Paged } from "../../db/paging.ts";
import { effectiveFor, placeOf } from "../../domain/quotas/effective.ts";
import {
  approveQuotaRequest,
  askForQuota,
  cancelQuotaRequest,
  denyQuotaRequest,
  getQuotaRequest,
  listQuotaRequests,
} from "../../domain/quotas/requests.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentEffective, presentQuotaRequest } from "./presenter.ts";
import {
  ApproveQuotaRequestBody,
  CreateQuotaRequestBody,
  DenyQuotaRequestBody,
  EffectiveLimits,
  EffectiveQuery,
  ListQuotaRequestsQuery,
  QuotaRequest,
  RequestParams,
} from "./schemas.ts";

const TAGS = ["quota requests"];

export const effectiveRoute = defineRoute({
  method: "get",
  path: "/api/v1/resource-policies/effective",
  operationId: "getEffectiveLimits",
  tags: TAGS,
  summary: "Your limits, what you use of them, the headroom, and the policy each comes from",
  auth: "user",
  query: EffectiveQuery,
  errors: ["not_found"],
  responses: { 200: EffectiveLimits },
  handler: async ({ deps, principal, query }) => {
    const place = await placeOf(deps, principal, query.organization_id, query.project_id);
    return { status: 200, body: presentEffective(await effectiveFor(deps, principal.userId, place)) };
  },
});

export const listRoute = defineRoute({
  method: "get",
  path: "/api/v1/resource-policies/requests",
  operationId: "listQuotaRequests",
  tags: TAGS,
  summary: "Quota-increase requests: yours, and those you may decide",
  auth: "user",
  query: ListQuotaRequestsQuery,
  responses: { 200: Paged(QuotaRequest) },
  handler: async ({ deps, principal, query }) => ({
    status: 200,
    body: await listQuotaRequests(
      deps,
      principal,
      {
        page: query.page,
        size: query.size,
        box: query.box,
        status: query.status,
        organizationId: query.organization_id,
      },
      presentQuotaRequest(principal),
    ),
  }),
});

export const createRoute = defineRoute({
  method: "post",
  path: "/api/v1/resource-policies/requests",
  operationId: "createQuotaRequest",
  tags: TAGS,
  summary: "Ask for higher limits with a reason; the administrators who may decide are notified",
  description:
    "Scope user raises your own limits in the organization (GPUs, sessions, volume GB, session hours); scope project raises a project's shared ones. Each asked value must exceed the current limit. One pending request per target.",
  auth: "user",
  body: CreateQuotaRequestBody,
  idempotent: true,
  audit: "quota_request.create",
  responses: { 201: QuotaRequest },
  handler: async ({ deps, principal, body, audit }) => {
    const r = await askForQuota(deps, principal, {
      organizationId: body.organization_id,
      projectId: body.project_id,
      scope: body.scope,
      limits: body.limits,
      reason: body.reason,
    });
    audit.target("quota_request", r.id);
    audit.organization(r.organization_id);
    if (r.project_id) audit.project(r.project_id);
    return { status: 201, body: presentQuotaRequest(principal)(r) };
  },
});

export const getRoute = defineRoute({
  method: "get",
  path: "/api/v1/resource-policies/requests/:requestId",
  operationId: "getQuotaRequest",
  tags: TAGS,
  summary: "A quota-increase request",
  auth: "user",
  params: RequestParams,
  responses: { 200: QuotaRequest },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentQuotaRequest(principal)(await getQuotaRequest(deps, principal, params.requestId)),
  }),
});

export const approveRoute = defineRoute({
  method: "post",
  path: "/api/v1/resource-policies/requests/:requestId/approve",
  operationId: "approveQuotaRequest",
  tags: TAGS,
  summary: "Approve all or part of a request: writes the user's or project's policy override",
  description:
    "The override changes only the granted limits. Decided already: 409 request_already_decided. Your own request: 403.",
  auth: "user",
  params: RequestParams,
  body: ApproveQuotaRequestBody,
  idempotent: true,
  audit: "quota_request.approve",
  responses: { 200: QuotaRequest },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("quota_request", params.requestId);
    const { request, override } = await approveQuotaRequest(deps, principal, params.requestId, {
      limits: body.limits,
      note: body.note,
    });
    audit.organization(request.organization_id);
    if (request.project_id) audit.project(request.project_id);
    audit.detail("policy", override.name);
    audit.change(override.before, override.after);
    return { status: 200, body: presentQuotaRequest(principal)(request) };
  },
});

export const denyRoute = defineRoute({
  method: "post",
  path: "/api/v1/resource-policies/requests/:requestId/deny",
  operationId: "denyQuotaRequest",
  tags: TAGS,
  summary: "Deny a request with a note; the requester is notified",
  auth: "user",
  params: RequestParams,
  body: DenyQuotaRequestBody,
  idempotent: true,
  audit: "quota_request.deny",
  responses: { 200: QuotaRequest },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("quota_request", params.requestId);
    const r = await denyQuotaRequest(deps, principal, params.requestId, { note: body.note });
    audit.organization(r.organization_id);
    return { status: 200, body: presentQuotaRequest(principal)(r) };
  },
});

export const cancelRoute = defineRoute({
  method: "post",
  path: "/api/v1/resource-policies/requests/:requestId/cancel",
  operationId: "cancelQuotaRequest",
  tags: TAGS,
  summary: "Withdraw your pending request",
  auth: "user",
  params: RequestParams,
  audit: "quota_request.cancel",
  responses: { 200: QuotaRequest },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("quota_request", params.requestId);
    const r = await cancelQuotaRequest(deps, principal, params.requestId);
    audit.organization(r.organization_id);
    return { status: 200, body: presentQuotaRequest(principal)(r) };
  },
});

export const routes: RouteDef[] = [
  effectiveRoute,
  listRoute,
  createRoute,
  getRoute,
  approveRoute,
  denyRoute,
  cancelRoute,
];
