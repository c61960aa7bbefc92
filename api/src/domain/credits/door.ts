// Credits at the door: creating or resuming a session is refused with 403 `quota_exceeded` when its
// wallets cannot pay for a minimum run (10 minutes at the session's rate by default) after the minimum
// runs of the organization's sessions already let in, when their spend limits let less than that
// through, or when the organization's budget for the period has less left than that. Called by the
// sessions domain's quota gate (domain/sessions/checkQuota.ts) inside the transaction that holds the
// owner's and the organization's door locks; the cost preview asks `assessStart` without locks.
//
// The rule: the sessions already let in (wanting to run, not ended) are owed their minimum run first,
// oldest start first, drawn in draw order from a copy of the organization's wallets, allowances and
// budget; the new session gets what is left. So two sessions started together on a thin wallet cannot
// both pass, whoever owns them.
//
// details: {limit, value, reserved, required, ...}: `limit` names the check ("credits",
// "maxSpendPerDay"/"maxSpendPerMonth" of a wallet, "organizationBudget"), `value` what is there (the
// wallets' spendable units, or the limit or budget), `reserved` what the other sessions' minimum runs
// take of it first, `required` what this session's minimum run costs; amounts are strings of minor units.
import type { Knex } from "knex";
import { findBudget } from "../../db/operations/ledger/budgets.ts";
import { organizationSpend } from "../../db/operations/ledger/organizationSpend.ts";
import { promisedSessions } from "../../db/operations/ledger/promisedSessions.ts";
import { walletsOfOrganizations } from "../../db/operations/ledger/runningSessions.ts";
import type { WalletRow } from "../../db/operations/ledger/types.ts";
import { QuotaExceeded } from "../../errors.ts";
import { allowancesLeft, walletAllowances } from "./allowances.ts";
import { rateOf } from "./charge.ts";
import type { CreditsContext, OfferingRate } from "./context.ts";
import { atPermille, costOf, formatCredits, sessionRate, units } from "./money.ts";
import { nextPeriodStart, periodStart } from "./periods.ts";
import { bindingLimit, canGive, capacity, type Pool, shortOf, takeUpTo } from "./pool.ts";
import { chainOwners, ownerKey, type SessionOwnership, walletKey } from "./wallets.ts";

export interface DoorRequest {
  ownerId: string;
  organizationId: string;
  projectId: string | null;
  offering: OfferingRate;
  gpuCount: number;
  /** A borrowed request's share of the rate in thousandths (docs/dev/fair-share.md); absent: 1000. */
  ratePermille?: number;
  /** The session being resumed: not one of those already owed a minimum run. */
  sessionId?: string;
}

export interface DoorAnswer {
  canStart: boolean;
  hourlyRate: bigint;
  required: bigint;
  /** What the session's wallets hold, down to their floors. */
  available: bigint;
  /** What the other live sessions' minimum runs take from those wallets first. */
  reserved: bigint;
  /** The budget left for this session after the others' minimum runs; null: no budget. */
  budgetLeft: bigint | null;
  refusal?: QuotaExceeded;
}

const UNIT = "minor (1 credit = 1000000)";

/** What the door would say, without throwing, locking or writing (the cost preview uses it too). */
export async function assessStart(b: CreditsContext, db: Knex, req: DoorRequest): Promise<DoorAnswer> {
  return (await openDoor(b, db, req.organizationId, req.sessionId)).assess(req);
}

/**
 * An organization's door as read once: its wallets, allowances, budget and the minimum runs owed to the
 * sessions already let in. `assess` answers for one request; `letIn` counts an admitted request's minimum
 * run before the next is assessed, so a batch of creates read under one lock (domain/sessions/admission.ts)
 * gets the answers those creates would get one after the other.
 */
export interface OpenDoor {
  assess(req: DoorRequest): DoorAnswer;
  letIn(req: DoorRequest): void;
}

/** Reads what the door needs of one organization. `exceptId`: the session being resumed. */
export async function openDoor(
  b: CreditsContext,
  db: Knex,
  organizationId: string,
  exceptId?: string,
): Promise<OpenDoor> {
  const now = b.clock.now();
  const seconds = b.options.minimumRunSeconds;

  // Every wallet of the organization: the other sessions' chains (other people's own wallets
  // included) decide how much of the shared project and organization wallets they take.
  const wallets = (await walletsOfOrganizations(db, [organizationId])) as WalletRow[];
  const byOwner = new Map(wallets.map((w) => [walletKey(w), w]));
  const chainOf = (s: SessionOwnership) => chainOwners(s).flatMap((o) => byOwner.get(ownerKey(o)) ?? []);
  const allowances = await walletAllowances(db, wallets, now);
  const budget = await findBudget(db, organizationId);
  const budgetFrom = budget ? periodStart(budget.period, now) : now;
  const spent = budget ? await organizationSpend(db, organizationId, budgetFrom) : 0n;
  const fresh = (): Pool => ({
    balances: new Map(wallets.map((w) => [w.id, units(w.balance)])),
    allowances: allowancesLeft(allowances),
    budget: budget ? units(budget.amount) - spent : null,
  });
  const before = fresh();
  const pool = fresh();
  const others = await promisedSessions(db, organizationId, exceptId);
  const rates = new Map<string, OfferingRate | undefined>();
  for (const s of others) {
    if (!rates.has(s.offering)) rates.set(s.offering, await b.offerings(s.offering));
    takeUpTo(pool, chainOf(s), costOf(rateOf(s, rates.get(s.offering)), seconds));
  }
  let letIn = others.length;
  const chainOfRequest = (req: DoorRequest) =>
    chainOf({ owner_id: req.ownerId, organization_id: req.organizationId, project_id: req.projectId });

  return {
    assess: (req) =>
      answerAtDoor({
        req,
        seconds,
        chain: chainOfRequest(req),
        before,
        pool,
        allowances,
        budget,
        budgetFrom,
        spent,
        letIn,
      }),
    letIn(req) {
      takeUpTo(pool, chainOfRequest(req), costOf(rateOfRequest(req), seconds));
      letIn++;
    },
  };
}

const rateOfRequest = (req: DoorRequest) =>
  atPermille(
    sessionRate(units(req.offering.hourlyCreditRate), req.offering.gpuCount, req.gpuCount),
    req.ratePermille ?? 1000,
  );

function answerAtDoor(d: {
  req: DoorRequest;
  seconds: number;
  chain: WalletRow[];
  before: Pool;
  pool: Pool;
  allowances: Awaited<ReturnType<typeof walletAllowances>>;
  budget: Awaited<ReturnType<typeof findBudget>>;
  budgetFrom: Date;
  spent: bigint;
  /** How many sessions are owed a minimum run before this one. */
  letIn: number;
}): DoorAnswer {
  const { req, seconds, chain, before, pool, allowances, budget, budgetFrom, spent, letIn } = d;
  const rate = rateOfRequest(req);
  const hourlyRate = costOf(rate, 3600);
  const required = costOf(rate, seconds);
  const available = capacity(before, chain).credits;
  const left = capacity(pool, chain);
  const reserved = available - left.credits;
  const answer: DoorAnswer = { canStart: true, hourlyRate, required, available, reserved, budgetLeft: pool.budget };
  const minutes = seconds / 60;
  const owed =
    letIn > 0
      ? `, of which ${formatCredits(reserved)} are owed to the minimum runs of ${letIn} session(s) already let in`
      : "";

  switch (shortOf(pool, chain, required)) {
    case null:
      return answer;
    case "credits":
      return {
        ...answer,
        canStart: false,
        refusal: new QuotaExceeded(
          `the session's wallets hold ${formatCredits(available)} credits${owed}; a session on this offering needs ${formatCredits(required)} to run ${minutes} minutes`,
          {
            limit: "credits",
            value: available.toString(),
            reserved: reserved.toString(),
            required: required.toString(),
            unit: UNIT,
            minimum_run_seconds: seconds,
            hourly_rate: hourlyRate.toString(),
            sessions_let_in: letIn,
            wallets: chain.map((w) => ({
              id: w.id,
              owner_kind: w.owner_kind,
              spendable: canGive(before, w, { limits: false }).toString(),
              reserved: (canGive(before, w, { limits: false }) - canGive(pool, w, { limits: false })).toString(),
            })),
          },
        ),
      };
    case "limits": {
      const w = bindingLimit(pool, chain) as WalletRow;
      const a = allowances.get(w.id);
      if (!a) throw new Error(`wallet ${w.id} holds back credits without a limit`);
      const per = a.period === "daily" ? "day" : "month";
      return {
        ...answer,
        canStart: false,
        refusal: new QuotaExceeded(
          `the ${w.owner_kind} wallet ${w.id} may pay at most ${formatCredits(a.value)} credits a ${per} and has paid ${formatCredits(a.spent)}; within their limits the session's wallets can give ${formatCredits(left.withinLimits)} of the ${formatCredits(required)} a session on this offering needs to run ${minutes} minutes`,
          {
            limit: a.limit,
            value: a.value.toString(),
            spent: a.spent.toString(),
            reserved: (a.left - (pool.allowances.get(w.id) ?? a.left)).toString(),
            required: required.toString(),
            available: left.withinLimits.toString(),
            unit: UNIT,
            wallet_id: w.id,
            owner_kind: w.owner_kind,
            period: a.period,
            period_start: a.periodStart.toISOString(),
            resets_at: a.resetsAt.toISOString(),
            minimum_run_seconds: seconds,
          },
        ),
      };
    }
    case "organizationBudget": {
      const b0 = budget as NonNullable<typeof budget>;
      const leftNow = (pool.budget ?? 0n) < 0n ? 0n : (pool.budget ?? 0n);
      return {
        ...answer,
        canStart: false,
        refusal: new QuotaExceeded(
          `the organization's ${b0.period} budget has ${formatCredits(leftNow)} credits left${letIn > 0 ? " after the minimum runs of the sessions already let in" : ""}; a session on this offering needs ${formatCredits(required)} to run ${minutes} minutes`,
          {
            limit: "organizationBudget",
            value: b0.amount,
            spent: spent.toString(),
            reserved: ((before.budget ?? 0n) - (pool.budget ?? 0n)).toString(),
            required: required.toString(),
            unit: UNIT,
            period: b0.period,
            period_start: budgetFrom.toISOString(),
            resets_at: nextPeriodStart(b0.period, budgetFrom).toISOString(),
          },
        ),
      };
    }
  }
}
