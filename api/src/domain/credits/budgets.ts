// Organization budgets: a spending cap per period (UTC day, week from Monday, month) on what the
// organization's sessions are charged, whichever wallet pays. Set by the organization's admins or a
// super_admin; read by them. Spend so far is the sum of the period's charges (by charging time). The
// door refuses new sessions when less than a minimum run is left, and the running-out watch pauses
// running ones when the rest of the budget will not cover their next minute.

import {
  type BudgetRow,
  budgetsQuery,
  deleteBudget,
  findBudget,
  upsertBudget,
} from "../../db/operations/ledger/budgets.ts";
import { organizationSpend } from "../../db/operations/ledger/organizationSpend.ts";
import { type PagedBody, paginate } from "../../db/paging.ts";
import type { Deps } from "../../deps.ts";
import { Forbidden, NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { canAdminOrganization, canSeeOrganization, scopeOf } from "../identity/scope.ts";
import { units } from "./money.ts";
import { nextPeriodStart, type Period, periodStart } from "./periods.ts";

type D = Pick<Deps, "db" | "clock">;

export interface BudgetView {
  organizationId: string;
  period: Period;
  amount: bigint;
  spent: bigint;
  remaining: bigint;
  periodStart: Date;
  resetsAt: Date;
  updatedBy: string;
  updatedAt: Date;
}

export async function viewBudget(deps: D, b: BudgetRow): Promise<BudgetView> {
  const start = periodStart(b.period, deps.clock.now());
  const spent = await organizationSpend(deps.db, b.organization_id, start);
  const amount = units(b.amount);
  return {
    organizationId: b.organization_id,
    period: b.period,
    amount,
    spent,
    remaining: amount > spent ? amount - spent : 0n,
    periodStart: start,
    resetsAt: nextPeriodStart(b.period, start),
    updatedBy: b.updated_by,
    updatedAt: b.updated_at,
  };
}

function assertSees(p: Principal, organizationId: string): void {
  const s = scopeOf(p);
  // Budgets are the admins' business: members of the organization do not see them.
  if (!canSeeOrganization(s, organizationId) || !canAdminOrganization(s, organizationId)) {
    if (!canSeeOrganization(s, organizationId)) throw new NotFound("budget", organizationId);
    throw new Forbidden("only the organization's admins see its budget");
  }
}

export async function listBudgets(
  deps: D,
  p: Principal,
  q: { page: number; size: number },
): Promise<PagedBody<BudgetView>> {
  const s = scopeOf(p);
  const page = await paginate(
    deps.db,
    budgetsQuery(deps.db, s.all ? "all" : [...s.adminOrganizations]),
    q,
    (r: BudgetRow) => r,
  );
  return { data: await Promise.all(page.data.map((r) => viewBudget(deps, r))), pagination: page.pagination };
}

export async function getBudget(deps: D, p: Principal, organizationId: string): Promise<BudgetView> {
  assertSees(p, organizationId);
  const b = await findBudget(deps.db, organizationId);
  if (!b) throw new NotFound("budget", organizationId);
  return viewBudget(deps, b);
}

export async function setBudget(
  deps: D,
  p: Principal,
  organizationId: string,
  input: { period: Period; amount: bigint },
): Promise<{ view: BudgetView; created: boolean }> {
  assertSees(p, organizationId);
  const org = await deps.db("organizations").where({ id: organizationId }).first("id");
  if (!org) throw new NotFound("organization", organizationId);
  const { row, created } = await upsertBudget(deps.db, {
    organizationId,
    period: input.period,
    amount: input.amount,
    by: p.userId,
    at: deps.clock.now(),
  });
  return { view: await viewBudget(deps, row), created };
}

export async function removeBudget(deps: D, p: Principal, organizationId: string): Promise<void> {
  assertSees(p, organizationId);
  if (!(await deleteBudget(deps.db, organizationId))) throw new NotFound("budget", organizationId);
}
