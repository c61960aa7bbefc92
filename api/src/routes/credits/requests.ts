// /api/v1/credits/requests: asking for credits, and deciding on a request (docs/dev/billing.md).

import { Paged } from "../../db/paging.ts";
import {
  approveCreditRequest,
  askForCredits,
  cancelCreditRequest,
  denyCreditRequest,
  getCreditRequest,
  listCreditRequests,
} from "../../domain/credits/requests.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentCreditRequest } from "./presenter.ts";
import { ApproveBody, AskBody, CreditRequest, DenyBody, ListRequestsQuery, RequestParams } from "./schemas.ts";
import { TAGS, units } from "./shared.ts";

export const listRequestsRoute = defineRoute({
  method: "get",
  path: "/api/v1/credits/requests",
  operationId: "listCreditRequests",
  tags: TAGS,
  summary: "Credit requests: yours, and those you may decide",
  auth: "user",
  query: ListRequestsQuery,
  responses: { 200: Paged(CreditRequest) },
  handler: async ({ deps, principal, query }) => ({
    status: 200,
    body: await listCreditRequests(deps, principal, query, presentCreditRequest),
  }),
});

export const askRoute = defineRoute({
  method: "post",
  path: "/api/v1/credits/requests",
  operationId: "requestCredits",
  tags: TAGS,
  summary: "Ask for credits, with a reason, for your wallet in an organization or for a project's wallet",
  auth: "user",
  body: AskBody,
  idempotent: true,
  audit: "credits.request.create",
  errors: ["not_found"],
  responses: { 201: CreditRequest },
  handler: async ({ deps, principal, body, audit }) => {
    audit.organization(body.organization_id);
    const r = await askForCredits(deps, principal, {
      organizationId: body.organization_id,
      projectId: body.project_id,
      amount: units(body.amount),
      reason: body.reason,
    });
    audit.target("credit_request", r.id);
    return { status: 201, body: presentCreditRequest(r) };
  },
});

export const getRequestRoute = defineRoute({
  method: "get",
  path: "/api/v1/credits/requests/:requestId",
  operationId: "getCreditRequest",
  tags: TAGS,
  summary: "A credit request",
  auth: "user",
  params: RequestParams,
  responses: { 200: CreditRequest },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentCreditRequest(await getCreditRequest(deps, principal, params.requestId)),
  }),
});

export const approveRoute = defineRoute({
  method: "post",
  path: "/api/v1/credits/requests/:requestId/approve",
  operationId: "approveCreditRequest",
  tags: TAGS,
  summary: "Approve a request, all of it or part (an allocation from a wallet you manage); the requester is notified",
  auth: "user",
  params: RequestParams,
  body: ApproveBody,
  idempotent: true,
  audit: "credits.request.approve",
  errors: ["not_found", "conflict", "bad_request", "insufficient_credits"],
  responses: { 200: CreditRequest },
  handler: async ({ deps, principal, params, body, requestId, audit }) => {
    audit.target("credit_request", params.requestId);
    const r = await approveCreditRequest(
      deps,
      principal,
      params.requestId,
      {
        amount: body.amount === undefined ? undefined : units(body.amount),
        fromWalletId: body.from_wallet_id,
        note: body.note,
      },
      { requestId },
    );
    audit.organization(r.organization_id);
    audit.detail("amount", r.approved_amount);
    return { status: 200, body: presentCreditRequest(r) };
  },
});

export const denyRoute = defineRoute({
  method: "post",
  path: "/api/v1/credits/requests/:requestId/deny",
  operationId: "denyCreditRequest",
  tags: TAGS,
  summary: "Deny a request; the requester is notified",
  auth: "user",
  params: RequestParams,
  body: DenyBody,
  idempotent: true,
  audit: "credits.request.deny",
  errors: ["conflict"],
  responses: { 200: CreditRequest },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("credit_request", params.requestId);
    const r = await denyCreditRequest(deps, principal, params.requestId, { note: body.note });
    audit.organization(r.organization_id);
    return { status: 200, body: presentCreditRequest(r) };
  },
});

export const cancelRoute = defineRoute({
  method: "post",
  path: "/api/v1/credits/requests/:requestId/cancel",
  operationId: "cancelCreditRequest",
  tags: TAGS,
  summary: "Withdraw your pending request",
  auth: "user",
  params: RequestParams,
  idempotent: true,
  audit: "credits.request.cancel",
  errors: ["conflict"],
  responses: { 200: CreditRequest },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("credit_request", params.requestId);
    const r = await cancelCreditRequest(deps, principal, params.requestId);
    audit.organization(r.organization_id);
    return { status: 200, body: presentCreditRequest(r) };
  },
});

export const routes: RouteDef[] = [listRequestsRoute, askRoute, getRequestRoute, approveRoute, denyRoute, cancelRoute];
