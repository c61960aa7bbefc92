import type { z } from "zod";
import type { BudgetView } from "../../domain/credits/budgets.ts";
import type { Budget } from "./schemas.ts";

export function presentBudget(b: BudgetView): z.input<typeof Budget> {
  return {
    organization_id: b.organizationId,
    period: b.period,
    amount: b.amount.toString(),
    spent: b.spent.toString(),
    remaining: b.remaining.toString(),
    period_start: b.periodStart.toISOString(),
    resets_at: b.resetsAt.toISOString(),
    updated_by: b.updatedBy,
    updated_at: new Date(b.updatedAt).toISOString(),
  };
}
