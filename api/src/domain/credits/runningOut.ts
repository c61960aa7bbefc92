// Running out: the worker's watch over running sessions. Per organization, the running sessions are
// taken oldest first and their next minute (pauseAheadSeconds) is drawn, in draw order, from a copy of
// the wallets' balances and the budget left; the same with ten minutes (warnAheadSeconds) on another
// copy. Wallets count within their daily and monthly spend limits (allowances.ts), as charging pays.
// A session whose next minute cannot be covered is paused through the sessions domain (the GPU
// returns, billing stops, volumes stay); one whose next ten minutes cannot be covered is warned about
// (a notification to its owner and a `session.credits_low` event on the sessions stream), once per
// episode. Oldest first: when credits are short, the newest sessions stop first and the longest-running
// work survives. Once its wallets are topped up a paused session may be resumed (the door checks it).

import { findBudget } from "../../db/operations/ledger/budgets.ts";
import { organizationSpend } from "../../db/operations/ledger/organizationSpend.ts";
import {
  alertsOf,
  clearAlerts,
  recordAlert,
  runningSessions,
  walletsOfOrganizations,
} from "../../db/operations/ledger/runningSessions.ts";
import type { WalletRow } from "../../db/operations/ledger/types.ts";
import { insertSessionEvents } from "../../db/operations/sessions/sessionEvents.ts";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import { viewFromRow } from "../../db/operations/sessions/view.ts";
import { notify } from "../notifications/notify.ts";
import { type Allowance, allowancesLeft, type SpendLimitName, walletAllowances } from "./allowances.ts";
import { rateOf } from "./charge.ts";
import type { CreditsContext } from "./context.ts";
import { costOf, formatCredits, max, units } from "./money.ts";
import { periodStart } from "./periods.ts";
import { bindingLimit, capacity, type Pool, shortOf, takeUpTo } from "./pool.ts";
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
  limit: "credits" | "organizationBudget" | SpendLimitName | null;
}

/** Draws `amount` for a session from the pool when all of it fits (mutates it then). Pure otherwise. */
function draw(
  pool: Pool,
  chain: WalletRow[],
  amount: bigint,
  allowances: ReadonlyMap<string, Allowance>,
): { ok: boolean; available: bigint; limit: Verdict["limit"] } {
  const c = capacity(pool, chain);
  switch (shortOf(pool, chain, amount)) {
    case null:
      takeUpTo(pool, chain, amount);
      return { ok: true, available: c.withinLimits, limit: null };
    case "credits":
      return { ok: false, available: c.credits, limit: "credits" };
    case "limits": {
      const w = bindingLimit(pool, chain);
      return { ok: false, available: c.withinLimits, limit: (w && allowances.get(w.id)?.limit) ?? "credits" };
    }
    case "organizationBudget":
      return { ok: false, available: max(0n, pool.budget ?? 0n), limit: "organizationBudget" };
  }
}

/** The verdicts for every running session. Reads only. */
export async function assessRunningSessions(
  b: CreditsContext,
): Promise<{ verdicts: Verdict[]; sessions: Map<string, SessionRow> }> {
  const now = b.clock.now();
  const sessions = await runningSessions(b.db);
  const orgs = [...new Set(sessions.map((s) => s.organization_id))];
  const wallets = (await walletsOfOrganizations(b.db, orgs)) as WalletRow[];
  const byOwner = new Map(wallets.map((w) => [walletKey(w), w]));
  const allowances = await walletAllowances(b.db, wallets, now);
  const verdicts: Verdict[] = [];
  const rates = new Map<string, Awaited<ReturnType<CreditsContext["offerings"]>>>();
  for (const org of orgs) {
    const budget = await findBudget(b.db, org);
    const left = budget
      ? units(budget.amount) - (await organizationSpend(b.db, org, periodStart(budget.period, now)))
      : null;
    const fresh = (): Pool => ({
      balances: new Map(wallets.filter((w) => w.organization_id === org).map((w) => [w.id, units(w.balance)])),
      allowances: allowancesLeft(allowances),
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
      const pause = draw(soon, chain, minute, allowances);
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
      const warn = draw(later, chain, window, allowances);
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
  b: CreditsContext,
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
          kind: "session.paused",
          reason: "credits",
          title: "Session paused: out of credits",
          body: `Your session ${s.display_name ?? s.id} was paused because its credits${limitNote(v.limit)} could not cover its next minute. Its volumes are kept; resume it once credits are added.`,
        });
      }
    }
  }
  return { warned, paused };
}

function limitNote(limit: Verdict["limit"]): string {
  if (limit === "organizationBudget") return " (the organization's budget)";
  if (limit === "maxSpendPerDay") return " (a wallet's daily spend limit)";
  if (limit === "maxSpendPerMonth") return " (a wallet's monthly spend limit)";
  return "";
}

async function say(
  b: CreditsContext,
  s: SessionRow,
  event: string,
  credits: Record<string, unknown>,
  n: { kind: "credits.running_low" | "session.paused"; reason?: string; title: string; body: string },
): Promise<void> {
  const at = b.clock.now();
  await b.db.transaction(async (tx) => {
    await notify(tx, {
      userId: s.owner_id,
      organizationId: s.organization_id,
      kind: n.kind,
      title: n.title,
      body: n.body,
      data: { session_id: s.id, ...(n.reason ? { reason: n.reason } : {}), ...credits },
      // One per streak: billing_alerts says it once per episode, and the key keeps a second episode
      // from adding another while the first is still unread.
      dedupeKey: `${n.kind}:${s.id}`,
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
