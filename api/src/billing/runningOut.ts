// Running out: the worker's watch over running sessions. Per organization, the running sessions are
// taken oldest first and their next minute (pauseAheadSeconds) is drawn, in draw order, from a copy of
// the wallets' balances and the budget left; the same with ten minutes (warnAheadSeconds) on another
// copy. A session whose next minute cannot be covered is paused through the sessions domain (the GPU
// returns, billing stops, volumes stay); one whose next ten minutes cannot be covered is warned about
// (a notification to its owner and a `session.credits_low` event on the sessions stream), once per
// episode. Oldest first: when credits are short, the newest sessions stop first and the longest-running
// work survives. Once its wallets are topped up a paused session may be resumed (the door checks it).

import { findBudget } from "../db/operations/ledger/budgets.ts";
import { organizationSpend } from "../db/operations/ledger/organizationSpend.ts";
import {
  alertsOf,
  clearAlerts,
  recordAlert,
  runningSessions,
  walletsOfOrganizations,
} from "../db/operations/ledger/runningSessions.ts";
import type { WalletRow } from "../db/operations/ledger/types.ts";
import { insertSessionEvents } from "../db/operations/sessions/sessionEvents.ts";
import type { SessionRow } from "../db/operations/sessions/types.ts";
import { viewFromRow } from "../domain/sessions/view.ts";
import { rateOf } from "./charge.ts";
import type { BillingContext } from "./context.ts";
import { spendable } from "./ledger.ts";
import { costOf, formatCredits, units } from "./money.ts";
import { notify } from "./notify.ts";
import { periodStart } from "./periods.ts";
import { chainOwners, ownerKey, walletKey } from "./wallets.ts";

/**
 * Pauses a session through the sessions domain: true when paused, false when its phase does not allow a
 * pause now (e.g. still being placed); throws when the cluster cannot be reached. Both retry next pass.
 */
export type PauseSession = (sessionId: string) => Promise<boolean>;

export interface Verdict {
  sessionId: string;
  verdict: "ok" | "warn" | "pause";
  /** What its wallets (or budget) could give, and what the window needs, in units. */
  available: bigint;
  needed: bigint;
  limit: "credits" | "organizationBudget" | null;
}

interface Pool {
  balances: Map<string, bigint>;
  budget: bigint | null;
}

/** Draws `amount` for a session from the pool (mutates it when it fits). Pure otherwise. */
function draw(
  pool: Pool,
  chain: WalletRow[],
  amount: bigint,
): { ok: boolean; available: bigint; limit: Verdict["limit"] } {
  const available = chain.reduce(
    (s, w) => s + spendable({ ...w, balance: (pool.balances.get(w.id) ?? 0n).toString() }),
    0n,
  );
  if (available < amount) return { ok: false, available, limit: "credits" };
  if (pool.budget !== null && pool.budget < amount)
    return { ok: false, available: pool.budget < 0n ? 0n : pool.budget, limit: "organizationBudget" };
  let left = amount;
  for (const w of chain) {
    const can = spendable({ ...w, balance: (pool.balances.get(w.id) ?? 0n).toString() });
    const take = left < can ? left : can;
    pool.balances.set(w.id, (pool.balances.get(w.id) ?? 0n) - take);
    left -= take;
  }
  if (pool.budget !== null) pool.budget -= amount;
  return { ok: true, available, limit: null };
}

/** The verdicts for every running session. Reads only. */
export async function assessRunningSessions(
  b: BillingContext,
): Promise<{ verdicts: Verdict[]; sessions: Map<string, SessionRow> }> {
  const now = b.clock.now();
  const sessions = await runningSessions(b.db);
  const orgs = [...new Set(sessions.map((s) => s.organization_id))];
  const wallets = (await walletsOfOrganizations(b.db, orgs)) as WalletRow[];
  const byOwner = new Map(wallets.map((w) => [walletKey(w), w]));
  const verdicts: Verdict[] = [];
  const rates = new Map<string, Awaited<ReturnType<BillingContext["offerings"]>>>();
  for (const org of orgs) {
    const budget = await findBudget(b.db, org);
    const left = budget
      ? units(budget.amount) - (await organizationSpend(b.db, org, periodStart(budget.period, now)))
      : null;
    const fresh = (): Pool => ({
      balances: new Map(wallets.filter((w) => w.organization_id === org).map((w) => [w.id, units(w.balance)])),
      budget: left,
    });
    const soon = fresh();
    const later = fresh();
    for (const s of sessions.filter((x) => x.organization_id === org)) {
      if (!rates.has(s.offering)) rates.set(s.offering, await b.offerings(s.offering));
      const rate = rateOf(s, rates.get(s.offering));
      const chain = chainOwners(s).flatMap((o) => byOwner.get(ownerKey(o)) ?? []);
      const minute = costOf(rate, b.options.pauseAheadSeconds);
      const window = costOf(rate, b.options.warnAheadSeconds);
      const pause = draw(soon, chain, minute);
      if (!pause.ok) {
        verdicts.push({
          sessionId: s.id,
          verdict: "pause",
          available: pause.available,
          needed: minute,
          limit: pause.limit,
        });
        continue;
      }
      const warn = draw(later, chain, window);
      verdicts.push(
        warn.ok
          ? { sessionId: s.id, verdict: "ok", available: warn.available, needed: window, limit: null }
          : { sessionId: s.id, verdict: "warn", available: warn.available, needed: window, limit: warn.limit },
      );
    }
  }
  return { verdicts, sessions: new Map(sessions.map((s) => [s.id, s])) };
}

/** One pass of the watch: warn, pause, and forget alerts of sessions that are funded again. */
export async function watchRunningOut(
  b: BillingContext,
  pause: PauseSession,
): Promise<{ warned: string[]; paused: string[] }> {
  const now = b.clock.now();
  const { verdicts, sessions } = await assessRunningSessions(b);
  const existing = await alertsOf(
    b.db,
    verdicts.map((v) => v.sessionId),
  );
  const had = new Set(existing.map((a) => `${a.session_id}/${a.kind}`));
  const warned: string[] = [];
  const paused: string[] = [];
  await clearAlerts(
    b.db,
    verdicts
      .filter((v) => v.verdict === "ok" && (had.has(`${v.sessionId}/warned`) || had.has(`${v.sessionId}/paused`)))
      .map((v) => v.sessionId),
  );
  for (const v of verdicts) {
    const s = sessions.get(v.sessionId) as SessionRow;
    const credits = {
      limit: v.limit,
      available: v.available.toString(),
      needed: v.needed.toString(),
      seconds: v.verdict === "pause" ? b.options.pauseAheadSeconds : b.options.warnAheadSeconds,
    };
    if (v.verdict === "warn" && (await recordAlert(b.db, s.id, "warned", now))) {
      await say(b, s, "session.credits_low", credits, {
        kind: "credits.running_low",
        title: "Credits running low",
        body: `Your session ${s.display_name ?? s.id} has less than ${b.options.warnAheadSeconds / 60} minutes of credits left (${formatCredits(v.available)} of ${formatCredits(v.needed)} needed). It will be paused when they run out; ask for credits to keep it running.`,
      });
      warned.push(s.id);
    }
    if (v.verdict === "pause") {
      try {
        if (!(await pause(s.id))) continue;
      } catch (err) {
        b.log.warn({ err, session: s.id }, "pausing a session out of credits failed; retried on the next pass");
        continue;
      }
      paused.push(s.id);
      if (await recordAlert(b.db, s.id, "paused", now)) {
        await say(b, s, "session.credits_exhausted", credits, {
          kind: "session.paused_no_credits",
          title: "Session paused: out of credits",
          body: `Your session ${s.display_name ?? s.id} was paused because its credits ${v.limit === "organizationBudget" ? "(the organization's budget)" : ""} could not cover its next minute. Its volumes are kept; resume it once credits are added.`,
        });
      }
    }
  }
  return { warned, paused };
}

async function say(
  b: BillingContext,
  s: SessionRow,
  event: string,
  credits: Record<string, unknown>,
  n: { kind: string; title: string; body: string },
): Promise<void> {
  const at = b.clock.now();
  await b.db.transaction(async (tx) => {
    await notify(tx, {
      userId: s.owner_id,
      organizationId: s.organization_id,
      ...n,
      data: { session_id: s.id, ...credits },
      at,
    });
    await insertSessionEvents(tx, [
      {
        session_id: s.id,
        owner_id: s.owner_id,
        organization_id: s.organization_id,
        project_id: s.project_id,
        type: event,
        payload: { view: JSON.parse(JSON.stringify(viewFromRow(s))) as Record<string, unknown>, credits },
      },
    ]);
  });
}
