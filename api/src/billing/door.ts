// Credits at the door: creating or resuming a session is refused with 403 `quota_exceeded` when its
// wallets cannot pay for a minimum run (10 minutes at the session's rate by default), or when its
// organization's budget for the period has less left than that. Called by the sessions domain's quota
// gate (domain/sessions/checkQuota.ts) inside the transaction that holds the owner's lock.
//
// details: {limit, value, required, ...}: `limit` names the check ("credits" or "organizationBudget"),
// `value` what is there (spendable units across the session's wallets, or the budget left), `required`
// what the minimum run costs; amounts are strings of minor units.
import type { Knex } from "knex";
import { findBudget } from "../db/operations/ledger/budgets.ts";
import { organizationSpend } from "../db/operations/ledger/organizationSpend.ts";
import { QuotaExceeded } from "../errors.ts";
import type { BillingContext, OfferingRate } from "./context.ts";
import { spendable } from "./ledger.ts";
import { costOf, formatCredits, sessionRate, units } from "./money.ts";
import { nextPeriodStart, periodStart } from "./periods.ts";
import { walletChain } from "./wallets.ts";

export interface DoorRequest {
  ownerId: string;
  organizationId: string;
  projectId: string | null;
  offering: OfferingRate;
  gpuCount: number;
}

export interface DoorAnswer {
  canStart: boolean;
  hourlyRate: bigint;
  required: bigint;
  available: bigint;
  budgetLeft: bigint | null;
  refusal?: QuotaExceeded;
}

/** What the door would say, without throwing (the cost preview uses it too). */
export async function assessStart(b: BillingContext, db: Knex, req: DoorRequest): Promise<DoorAnswer> {
  const rate = sessionRate(units(req.offering.hourlyCreditRate), req.offering.gpuCount, req.gpuCount);
  const hourlyRate = costOf(rate, 3600);
  const seconds = b.options.minimumRunSeconds;
  const required = costOf(rate, seconds);
  const chain = await walletChain(db, {
    owner_id: req.ownerId,
    organization_id: req.organizationId,
    project_id: req.projectId,
  });
  const available = chain.reduce((sum, w) => sum + spendable(w), 0n);
  const base = { hourlyRate, required, available, budgetLeft: null as bigint | null };
  if (available < required) {
    return {
      ...base,
      canStart: false,
      refusal: new QuotaExceeded(
        `the session's wallets hold ${formatCredits(available)} credits; a session on this offering needs ${formatCredits(required)} to run ${seconds / 60} minutes`,
        {
          limit: "credits",
          value: available.toString(),
          required: required.toString(),
          unit: "minor (1 credit = 1000000)",
          minimum_run_seconds: seconds,
          hourly_rate: hourlyRate.toString(),
          wallets: chain.map((w) => ({ id: w.id, owner_kind: w.owner_kind, spendable: spendable(w).toString() })),
        },
      ),
    };
  }
  const budget = await findBudget(db, req.organizationId);
  if (budget) {
    const now = b.clock.now();
    const from = periodStart(budget.period, now);
    const spent = await organizationSpend(db, req.organizationId, from);
    const left = units(budget.amount) - spent;
    base.budgetLeft = left;
    if (left < required) {
      return {
        ...base,
        canStart: false,
        refusal: new QuotaExceeded(
          `the organization's ${budget.period} budget has ${formatCredits(left < 0n ? 0n : left)} credits left; a session on this offering needs ${formatCredits(required)} to run ${seconds / 60} minutes`,
          {
            limit: "organizationBudget",
            value: budget.amount,
            spent: spent.toString(),
            required: required.toString(),
            unit: "minor (1 credit = 1000000)",
            period: budget.period,
            period_start: from.toISOString(),
            resets_at: nextPeriodStart(budget.period, from).toISOString(),
          },
        ),
      };
    }
  }
  return { ...base, canStart: true };
}

export async function checkCreditsAtDoor(b: BillingContext, db: Knex, req: DoorRequest): Promise<void> {
  const a = await assessStart(b, db, req);
  if (a.refusal) throw a.refusal;
}
