// /api/v1/credits/allocations: credit movements between wallets, and allocating credits (Idempotency-Key).

import { Paged } from "../../db/paging.ts";
import { allocate } from "../../domain/credits/allocate.ts";
import { listMovements } from "../../domain/credits/movements.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentMovement } from "./presenter.ts";
import { AllocateBody, Allocation, ListAllocationsQuery } from "./schemas.ts";
import { TAGS, units } from "./shared.ts";

export const listAllocationsRoute = defineRoute({
  method: "get",
  path: "/api/v1/credits/allocations",
  operationId: "listAllocations",
  tags: TAGS,
  summary: "Credit movements between wallets you may see (allocations, grants, approved requests, refills, reversals)",
  auth: "user",
  query: ListAllocationsQuery,
  responses: { 200: Paged(Allocation) },
  handler: async ({ deps, principal, query }) => ({
    status: 200,
    body: await listMovements(deps, principal, query, presentMovement),
  }),
});

export const allocateRoute = defineRoute({
  method: "post",
  path: "/api/v1/credits/allocations",
  operationId: "allocateCredits",
  tags: TAGS,
  summary:
    "Move credits between two wallets of an organization (down, or back up); super_admins issue from the system wallet",
  description:
    "You must manage the paying wallet and see the receiving one; both belong to one organization (or one is the system wallet and the other an organization's). A paying wallet that cannot cover the amount: 409 `insufficient_credits` with `details.spendable`. Repeat with the same Idempotency-Key to retry safely: the credits move once.",
  auth: "user",
  body: AllocateBody,
  idempotent: true,
  audit: "credits.allocate",
  errors: ["not_found", "bad_request", "insufficient_credits"],
  responses: { 201: Allocation },
  handler: async ({ deps, principal, body, requestId, audit, ctx }) => {
    const key = ctx.get("Idempotency-Key");
    const r = await allocate(
      deps,
      principal,
      {
        fromWalletId: body.from_wallet_id,
        toWalletId: body.to_wallet_id,
        amount: units(body.amount),
        reason: body.reason,
      },
      { requestId, ...(key ? { idempotencyKey: key } : {}) },
    );
    const t = r.transaction;
    if (!t) throw new Error("an allocation of a positive amount always writes a transaction");
    audit.target("ledger_transaction", t.id);
    if (t.organization_id) audit.organization(t.organization_id);
    audit.detail("amount", t.amount);
    audit.detail("from_wallet_id", r.from.id);
    audit.detail("to_wallet_id", r.to.id);
    return {
      status: 201,
      body: presentMovement({ ...t, from_wallet_id: r.from.id, to_wallet_id: r.to.id }),
    };
  },
});

export const routes: RouteDef[] = [listAllocationsRoute, allocateRoute];
