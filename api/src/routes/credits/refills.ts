// /api/v1/credits/refills: refills that top a wallet up on a schedule, and their history.

import { Paged } from "../../db/paging.ts";
import { changeRefill, createRefill, historyOf, listRefills } from "../../domain/credits/refills.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentRefill, presentRefillApplication } from "./presenter.ts";
import { ChangeRefillBody, CreateRefillBody, ListWalletsQuery, Refill, RefillDetail, RefillParams } from "./schemas.ts";
import { TAGS, units } from "./shared.ts";

export const listRefillsRoute = defineRoute({
  method: "get",
  path: "/api/v1/credits/refills",
  operationId: "listRefills",
  tags: TAGS,
  summary: "Refill schedules of wallets you may see",
  auth: "user",
  query: ListWalletsQuery.pick({ page: true, size: true }),
  responses: { 200: Paged(Refill) },
  handler: async ({ deps, principal, query }) => ({
    status: 200,
    body: await listRefills(deps, principal, query, presentRefill),
  }),
});

export const createRefillRoute = defineRoute({
  method: "post",
  path: "/api/v1/credits/refills",
  operationId: "createRefill",
  tags: TAGS,
  summary: "Top a wallet up to, or by, an amount every period (paid by a wallet you manage)",
  description:
    "Applied once per period by the worker (UTC periods), also after downtime: each period since the last applied one is applied once, oldest first. A paying wallet short of credits pays what it has.",
  auth: "user",
  body: CreateRefillBody,
  idempotent: true,
  audit: "credits.refill.create",
  errors: ["not_found", "bad_request"],
  responses: { 201: Refill },
  handler: async ({ deps, principal, body, audit }) => {
    const r = await createRefill(deps, principal, {
      walletId: body.wallet_id,
      sourceWalletId: body.source_wallet_id,
      mode: body.mode,
      amount: units(body.amount),
      period: body.period,
      startsAt: body.starts_at ? new Date(body.starts_at) : undefined,
    });
    audit.target("refill", r.id);
    if (r.organization_id) audit.organization(r.organization_id);
    return { status: 201, body: presentRefill(r) };
  },
});

export const getRefillRoute = defineRoute({
  method: "get",
  path: "/api/v1/credits/refills/:refillId",
  operationId: "getRefill",
  tags: TAGS,
  summary: "A refill schedule and its latest applications",
  auth: "user",
  params: RefillParams,
  responses: { 200: RefillDetail },
  handler: async ({ deps, principal, params }) => {
    const { refill, applications } = await historyOf(deps, principal, params.refillId);
    return {
      status: 200,
      body: { ...presentRefill(refill), applications: applications.map(presentRefillApplication) },
    };
  },
});

export const changeRefillRoute = defineRoute({
  method: "patch",
  path: "/api/v1/credits/refills/:refillId",
  operationId: "changeRefill",
  tags: TAGS,
  summary: "Change or pause a refill schedule (the paying wallet's managers)",
  auth: "user",
  params: RefillParams,
  body: ChangeRefillBody,
  idempotent: true,
  audit: "credits.refill.change",
  errors: ["bad_request"],
  responses: { 200: Refill },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("refill", params.refillId);
    const r = await changeRefill(deps, principal, params.refillId, {
      mode: body.mode,
      amount: body.amount === undefined ? undefined : units(body.amount),
      period: body.period,
      enabled: body.enabled,
    });
    if (r.organization_id) audit.organization(r.organization_id);
    return { status: 200, body: presentRefill(r) };
  },
});

export const routes: RouteDef[] = [listRefillsRoute, createRefillRoute, getRefillRoute, changeRefillRoute];
