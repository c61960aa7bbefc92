// /api/v1/budgets: an organization's spending cap per period, with the spend so far. Its admins and
// super_admins set and read it; members do not see it.
import { z } from "zod";
import { Paged } from "../../db/paging.ts";
import { getBudget, listBudgets, removeBudget, setBudget } from "../../domain/credits/budgets.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentBudget } from "./presenter.ts";
import { Budget, BudgetParams, ListBudgetsQuery, SetBudgetBody } from "./schemas.ts";

const TAGS = ["budgets"];

export const listBudgetsRoute = defineRoute({
  method: "get",
  path: "/api/v1/budgets",
  operationId: "listBudgets",
  tags: TAGS,
  summary: "Budgets of the organizations you administer (super_admins: all)",
  auth: "user",
  query: ListBudgetsQuery,
  responses: { 200: Paged(Budget) },
  handler: async ({ deps, principal, query }) => {
    const page = await listBudgets(deps, principal, query);
    return { status: 200, body: { data: page.data.map(presentBudget), pagination: page.pagination } };
  },
});

export const getBudgetRoute = defineRoute({
  method: "get",
  path: "/api/v1/budgets/:organizationId",
  operationId: "getBudget",
  tags: TAGS,
  summary: "An organization's budget and its spend in the current period",
  auth: "user",
  params: BudgetParams,
  responses: { 200: Budget },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentBudget(await getBudget(deps, principal, params.organizationId)),
  }),
});

export const setBudgetRoute = defineRoute({
  method: "put",
  path: "/api/v1/budgets/:organizationId",
  operationId: "setBudget",
  tags: TAGS,
  summary: "Set an organization's spending cap per period (its org_admins, super_admins)",
  description:
    "New sessions are refused with 403 `quota_exceeded` (`details.limit` = `organizationBudget`) when less than a minimum run is left; running sessions are paused when the rest will not cover their next minute.",
  auth: "user",
  params: BudgetParams,
  body: SetBudgetBody,
  idempotent: true,
  audit: "budget.set",
  errors: ["not_found"],
  responses: { 200: Budget, 201: Budget },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.organization(params.organizationId);
    audit.target("budget", params.organizationId);
    const { view, created } = await setBudget(deps, principal, params.organizationId, {
      period: body.period,
      amount: BigInt(body.amount),
    });
    return { status: created ? 201 : 200, body: presentBudget(view) };
  },
});

export const deleteBudgetRoute = defineRoute({
  method: "delete",
  path: "/api/v1/budgets/:organizationId",
  operationId: "deleteBudget",
  tags: TAGS,
  summary: "Remove an organization's budget (no cap)",
  auth: "user",
  params: BudgetParams,
  audit: "budget.delete",
  responses: { 204: z.null() },
  handler: async ({ deps, principal, params, audit }) => {
    audit.organization(params.organizationId);
    audit.target("budget", params.organizationId);
    await removeBudget(deps, principal, params.organizationId);
    return { status: 204, body: null };
  },
});

export const routes: RouteDef[] = [listBudgetsRoute, getBudgetRoute, setBudgetRoute, deleteBudgetRoute];
