// The reclaim decision for one running session, pure (table-tested in plan.test.ts; the bench replays a
// simulated day through it): the activity signals, the session's rules and what its status already says →
// the next `status.reclaim`, the warnings to send now, and whether to pause (reason Idle or MaxRuntime).
//
// Idle: the stretch begins at the latest of the run period's start, the owner's last "keep running" and
// every signal's last activity; it pauses `timeout` later, never within 10 minutes of the period's start.
// Any signal unknown (a silent gateway, an operator that cannot reach the notebook, GPU metrics missing)
// suspends the idle rule: no warning, no pause. Warnings go out 15 and 5 minutes before; a pause needs both
// sent for the same deadline, so a deadline passed while the rule was suspended (or between ticks) first
// sends the missing warning and moves the deadline to 5 minutes after it, recorded in the status: the
// status is the clock from then on, and a restarted worker reads it back.
// Running time: pauses `maxRuntime` after the period's start whatever the signals say; warnings 60, 15 and
// 5 minutes before.
import type { SessionStatus } from "@berth/crds";

export const IDLE_WARNINGS = [15, 5] as const;
export const RUNTIME_WARNINGS = [60, 15, 5] as const;
/** No idle pause this soon after a (re)start. */
export const RESUME_GRACE_MS = 10 * 60_000;
const MIN = 60_000;

export type Signal =
  /** Observed; `lastActiveAt` null: no activity seen in this run period. */
  | { state: "known"; lastActiveAt: Date | null }
  | { state: "unknown"; why: string }
  /** Does not apply (no notebook server in a terminal or code-editor session). */
  | { state: "none" };

export interface Signals {
  gpu: Signal;
  traffic: Signal;
  notebook: Signal;
}

export type Reclaim = NonNullable<SessionStatus["reclaim"]>;

export interface ReclaimInput {
  now: Date;
  /** Start of the run period (status.startedAt): a resume starts a fresh one. */
  periodStart: Date;
  idleTimeoutMinutes: number;
  maxRuntimeMinutes: number;
  /** The owner's last keep-running in this period. */
  keptAt?: Date | undefined;
  signals: Signals;
  status?: Reclaim | undefined;
}

export interface Warning {
  kind: "idle" | "runtime";
  minutesBefore: number;
  deadline: Date;
}

export interface ReclaimPlan {
  /** The next status.reclaim; undefined: remove it. Compare with `changed`. */
  status: Reclaim | undefined;
  changed: boolean;
  warnings: Warning[];
  pause?: "Idle" | "MaxRuntime";
  /** Why the idle rule does not run now (signals unknown, turned off), for the API and logs. */
  idle: { state: "counting" | "warned" | "suspended" | "off"; since?: Date; deadline?: Date; why?: string };
  runtimeDeadline: Date;
}

const iso = (d: Date) => d.toISOString();
const later = (a: Date, b: Date) => (a.getTime() >= b.getTime() ? a : b);

/** The warnings due at `now` before `deadline` that `warned` does not hold; all due ones, latest last. */
function due(now: Date, deadline: Date, steps: readonly number[], warned: readonly number[]): number[] {
  const left = deadline.getTime() - now.getTime();
  return steps.filter((m) => left <= m * MIN && !warned.includes(m));
}

export function planReclaim(i: ReclaimInput): ReclaimPlan {
  const now = i.now;
  const period = iso(i.periodStart);
  // A status of another period is stale (resumed since): start afresh.
  const before = i.status?.period === period ? i.status : undefined;
  const warnings: Warning[] = [];
  let pause: ReclaimPlan["pause"];

  // --- Running time --------------------------------------------------------------------------------
  const runtimeDeadline = new Date(i.periodStart.getTime() + i.maxRuntimeMinutes * MIN);
  let runtime = before?.runtime && before.runtime.deadline === iso(runtimeDeadline) ? before.runtime : undefined;
  if (now.getTime() >= runtimeDeadline.getTime()) pause = "MaxRuntime";
  else {
    const send = due(now, runtimeDeadline, RUNTIME_WARNINGS, runtime?.warned ?? []);
    if (send.length > 0) {
      // Several due at once (the first tick of a short period): one message, the nearest.
      warnings.push({ kind: "runtime", minutesBefore: Math.min(...send), deadline: runtimeDeadline });
      runtime = { deadline: iso(runtimeDeadline), warned: [...(runtime?.warned ?? []), ...send] };
    }
  }

  // --- Idle ----------------------------------------------------------------------------------------
  let idle = before?.idle;
  let idleView: ReclaimPlan["idle"];
  const unknown = (Object.entries(i.signals) as [string, Signal][]).filter(([, s]) => s.state === "unknown");
  if (i.idleTimeoutMinutes <= 0) {
    idle = undefined;
    idleView = { state: "off" };
  } else if (unknown.length > 0) {
    // Suspended: nothing is sent and nothing pauses; what the status says stays until the signals return.
    idleView = {
      state: "suspended",
      why: unknown.map(([name, s]) => `${name}: ${(s as { why: string }).why}`).join("; "),
    };
  } else {
    let since = i.periodStart;
    if (i.keptAt) since = later(since, i.keptAt);
    for (const s of Object.values(i.signals) as Signal[])
      if (s.state === "known" && s.lastActiveAt) since = later(since, s.lastActiveAt);
    let deadline = new Date(
      Math.max(since.getTime() + i.idleTimeoutMinutes * MIN, i.periodStart.getTime() + RESUME_GRACE_MS),
    );
    // Same stretch as recorded: the recorded deadline may have been moved later (a late warning).
    if (idle && idle.since === iso(since)) deadline = later(deadline, new Date(idle.deadline));
    else idle = undefined; // activity since, or a first warning to come: a new stretch
    const warned = idle?.warned ?? [];
    const send = due(now, deadline, IDLE_WARNINGS, warned);
    if (now.getTime() >= deadline.getTime() && send.length === 0) {
      pause ??= "Idle";
      idleView = { state: "warned", since, deadline };
    } else if (send.length > 0) {
      // A warning owed at or past the deadline (the rule was suspended, or ticks are far apart): the last
      // one goes out now and the deadline moves to give it its 5 minutes.
      if (now.getTime() >= deadline.getTime() - Math.min(...send) * MIN + MIN && send.includes(5))
        deadline = later(deadline, new Date(now.getTime() + 5 * MIN));
      warnings.push({ kind: "idle", minutesBefore: Math.min(...send), deadline });
      idle = { since: iso(since), deadline: iso(deadline), warned: [...warned, ...send] };
      idleView = { state: "warned", since, deadline };
    } else idleView = { state: idle ? "warned" : "counting", since, deadline };
  }

  const status: Reclaim | undefined =
    idle || runtime ? { period, ...(idle ? { idle } : {}), ...(runtime ? { runtime } : {}) } : undefined;
  const changed = JSON.stringify(status ?? null) !== JSON.stringify(i.status ?? null);
  return { status, changed, warnings, ...(pause ? { pause } : {}), idle: idleView, runtimeDeadline };
}
