// One pass of the reclaim loop (api/src/worker/reclaimLoop.ts runs it while the worker leads): every
// Running session's signals and rules through the plan (plan.ts), then in this order, each step only when
// the one before it held: the status written (status.reclaim, with the resourceVersion read: a session
// that changed meanwhile waits for the next pass), the warnings sent (a notification, a
// `session.idle_warning` / `session.runtime_warning` event on the stream, and through it a webhook), the
// pause (through the sessions domain, reason Idle or MaxRuntime: the GPU returns, billing stops, volumes
// stay). A pass only reads while nothing is due, so a busy fleet costs no write.
import {
  KEEP_RUNNING_ANNOTATION,
  resourcePath,
  type Session,
  SessionKind,
  sessionEventBody,
  sessionIdOf,
  sessionPath,
} from "@berth/crds";
import type { Knex } from "knex";
import type { Logger } from "pino";
import { activityOf, sourcesSeen } from "../../db/operations/reclaim/readActivity.ts";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import { viewFromResource } from "../../db/operations/sessions/view.ts";
import { reclaimPolicyOf, sessionRules } from "../catalog/reclaimPolicy.ts";
import { tellOwnerPaused, warnOwner } from "../sessions/ownerNotices.ts";
import type { SessionsRuntime } from "../sessions/runtime.ts";
import { planReclaim, type ReclaimPlan, type Signals, type Warning } from "./plan.ts";
import { signalsOf } from "./signals.ts";

export interface ReclaimContext {
  db: Knex;
  clock: { now(): Date };
  log: Logger;
  sessions: SessionsRuntime;
  /** The sessions domain's system pause; true when paused. */
  pause(sessionId: string, reason: "Idle" | "MaxRuntime"): Promise<boolean>;
  staleMs?: number;
}

export interface PassResult {
  warned: { session: string; kind: Warning["kind"]; minutesBefore: number }[];
  paused: { session: string; reason: "Idle" | "MaxRuntime" }[];
  statusWrites: number;
}

/** The owner's keep-running in this run period, from the annotation the API writes. */
export function keepRunningOf(s: Session): { count: number; at?: Date } {
  const raw = s.metadata.annotations?.[KEEP_RUNNING_ANNOTATION];
  if (!raw || !s.status?.startedAt) return { count: 0 };
  try {
    const v = JSON.parse(raw) as { period?: string; count?: number; at?: string };
    if (Date.parse(v.period ?? "") !== Date.parse(s.status.startedAt) || typeof v.count !== "number" || !v.at)
      return { count: 0 };
    const at = new Date(v.at);
    return Number.isNaN(at.getTime()) ? { count: v.count } : { count: v.count, at };
  } catch {
    return { count: 0 };
  }
}

export async function runningSessionResources(rt: SessionsRuntime): Promise<Session[]> {
  const res = await rt.kube.request<{ items: unknown[] }>("GET", `${resourcePath(SessionKind)}?resourceVersion=0`);
  if (res.status !== 200) throw new Error(`listing sessions: ${res.status}`);
  const out: Session[] = [];
  for (const item of res.body.items ?? []) {
    const p = SessionKind.schema.safeParse(item);
    if (p.success && p.data.status?.phase === "Running" && p.data.spec.desiredState === "Running") out.push(p.data);
  }
  return out;
}

/** The plan of one session with what the pass read (also what the API shows as the idle countdown). */
export function planFor(
  s: Session,
  row: Pick<SessionRow, "organization_id" | "project_id" | "owner_id">,
  o: {
    now: Date;
    policies: Parameters<typeof reclaimPolicyOf>[0];
    activity: Awaited<ReturnType<typeof activityOf>>;
    sources: ReadonlyMap<string, Date>;
    staleMs?: number | undefined;
  },
): ReclaimPlan & {
  keepRunning: { used: number; max: number };
  rules: ReturnType<typeof sessionRules>;
  signals: Signals;
} {
  const policy = reclaimPolicyOf(o.policies, {
    organizationId: row.organization_id,
    projectId: row.project_id,
    userId: row.owner_id,
  });
  const rules = sessionRules(policy, s.spec);
  const periodStart = new Date(s.status?.startedAt ?? s.metadata.creationTimestamp ?? o.now.toISOString());
  const kept = keepRunningOf(s);
  const signals = signalsOf({
    row: o.activity.get(sessionIdOf(s.metadata.name as string)),
    clusterId: s.status?.cluster ?? "",
    sources: o.sources,
    now: o.now,
    periodStart,
    ...(o.staleMs ? { staleMs: o.staleMs } : {}),
  });
  const plan = planReclaim({
    now: o.now,
    periodStart,
    idleTimeoutMinutes: rules.idleTimeoutMinutes,
    maxRuntimeMinutes: rules.maxRuntimeMinutes,
    keptAt: kept.at,
    signals,
    status: s.status?.reclaim,
  });
  return { ...plan, keepRunning: { used: kept.count, max: policy.keepRunningMax }, rules, signals };
}

export async function watchIdleAndRuntime(c: ReclaimContext): Promise<PassResult> {
  const now = c.clock.now();
  const result: PassResult = { warned: [], paused: [], statusWrites: 0 };
  const resources = await runningSessionResources(c.sessions);
  if (resources.length === 0) return result;
  const ids = resources.map((s) => sessionIdOf(s.metadata.name as string));
  const rows = new Map<string, SessionRow>();
  for (let i = 0; i < ids.length; i += 1000)
    for (const r of (await c.db("sessions").whereIn("id", ids.slice(i, i + 1000))) as SessionRow[]) rows.set(r.id, r);
  const [policies, activity, sources] = await Promise.all([
    c.sessions.catalog.policies(),
    activityOf(c.db, ids),
    sourcesSeen(c.db),
  ]);
  for (const s of resources) {
    const id = sessionIdOf(s.metadata.name as string);
    const row = rows.get(id);
    if (!row) continue;
    const plan = planFor(s, row, { now, policies, activity, sources, staleMs: c.staleMs });
    try {
      if (plan.changed && !plan.pause) {
        if (!(await writeReclaimStatus(c.sessions, s, plan))) continue;
        result.statusWrites++;
      }
      if (plan.warnings.length > 0 && !plan.pause) {
        await sendWarnings(c, row, s, plan.warnings, now);
        await postWarningEvents(c, s, plan.warnings, now);
        for (const w of plan.warnings)
          result.warned.push({ session: id, kind: w.kind, minutesBefore: w.minutesBefore });
      }
      if (plan.pause && (await c.pause(id, plan.pause))) {
        result.paused.push({ session: id, reason: plan.pause });
        await tellPaused(c, row, plan.pause, plan, now);
      }
    } catch (err) {
      c.log.warn({ err, session: id }, "reclaim: a session's step failed; retried on the next pass");
    }
  }
  return result;
}

/** status.reclaim by a merge patch of the status with the resourceVersion read; false on a conflict. */
async function writeReclaimStatus(rt: SessionsRuntime, s: Session, plan: ReclaimPlan): Promise<boolean> {
  const res = await rt.kube.request(
    "PATCH",
    sessionPath(s.metadata.namespace as string, s.metadata.name as string, "status"),
    { body: { metadata: { resourceVersion: s.metadata.resourceVersion }, status: { reclaim: plan.status ?? null } } },
  );
  if (res.status === 409 || res.status === 404) return false;
  if (res.status >= 300) throw new Error(`writing the reclaim status of ${s.metadata.name}: ${res.status}`);
  return true;
}

const clockTime = (d: Date) => `${d.toISOString().slice(11, 16)} UTC`;
const minutesLeft = (deadline: Date, now: Date) =>
  Math.max(0, Math.ceil((deadline.getTime() - now.getTime()) / 60_000));

async function sendWarnings(c: ReclaimContext, row: SessionRow, s: Session, warnings: Warning[], now: Date) {
  const name = row.display_name ?? row.id;
  const view = JSON.parse(JSON.stringify(viewFromResource(row, s))) as Record<string, unknown>;
  await c.db.transaction(async (tx) => {
    for (const w of warnings) {
      const left = minutesLeft(w.deadline, now);
      const idle = w.kind === "idle";
      await warnOwner(
        tx,
        row,
        {
          kind: idle ? "session.idle_warning" : "session.runtime_warning",
          title: idle ? `Idle session will be paused in ${left} min` : `Session reaches its time limit in ${left} min`,
          body: idle
            ? `Your session ${name} has not been used for a while (no GPU work, no typing, no busy kernel). It will be paused at ${clockTime(w.deadline)} to free its GPU; its volumes are kept. Use it, or choose "Keep running", to keep it.`
            : `Your session ${name} reaches its maximum running time at ${clockTime(w.deadline)} and will be paused then; its volumes are kept and you can resume it.`,
          data: { session_id: row.id, deadline: w.deadline.toISOString(), minutes_left: left },
          dedupeKey: `${w.kind}_warning:${row.id}:${w.deadline.toISOString()}:${w.minutesBefore}`,
          view,
          warning: {
            kind: w.kind,
            reason: idle ? "Idle" : "MaxRuntime",
            deadline: w.deadline.toISOString(),
            minutes_left: left,
            minutes_before: w.minutesBefore,
          },
        },
        now,
      );
    }
  });
}

/**
 * A Warning Event on the Session for each warning (reason IdleWarning or RuntimeWarning), as the pause has
 * one: `kubectl describe` and the console's events show it. Best effort, after the notification is
 * written: a lost Event is logged, the notification and the stream carry the warning.
 */
async function postWarningEvents(c: ReclaimContext, s: Session, warnings: Warning[], now: Date): Promise<void> {
  const ns = s.metadata.namespace as string;
  for (const w of warnings) {
    const idle = w.kind === "idle";
    const left = minutesLeft(w.deadline, now);
    const event = {
      type: "Warning" as const,
      reason: idle ? "IdleWarning" : "RuntimeWarning",
      message: idle
        ? `idle: will be paused at ${w.deadline.toISOString()} (in ${left} min) unless it is used`
        : `reaches its maximum running time at ${w.deadline.toISOString()} (in ${left} min) and will be paused`,
    };
    const res = await c.sessions.kube
      .request("POST", `/api/v1/namespaces/${ns}/events`, { body: sessionEventBody(s, event, "berth-reclaim", now) })
      .catch((err: unknown) => ({ status: 0, body: String(err) }));
    if (res.status >= 300 || res.status === 0)
      c.log.warn({ status: res.status, session: s.metadata.name }, "reclaim: the warning's Event was not recorded");
  }
}

async function tellPaused(
  c: ReclaimContext,
  row: SessionRow,
  reason: "Idle" | "MaxRuntime",
  plan: ReclaimPlan,
  now: Date,
) {
  const name = row.display_name ?? row.id;
  await c.db.transaction(async (tx) => {
    await tellOwnerPaused(
      tx,
      row,
      {
        title: reason === "Idle" ? "Session paused: idle" : "Session paused: time limit reached",
        body:
          reason === "Idle"
            ? `Your session ${name} was paused because nothing used it since ${clockTime(plan.idle.since ?? now)}. Its GPU went back to the pool and billing stopped; its volumes are kept. Resume it when you need it.`
            : `Your session ${name} was paused because it reached its maximum running time. Its volumes are kept; resume it to start a new period.`,
        data: { session_id: row.id, reason: reason === "Idle" ? "idle" : "time_limit" },
        actorId: "system:reclaim",
        actorReason: reason === "Idle" ? "idle auto-pause" : "maximum running time",
        requestId: `reclaim:pause:${row.id}:${now.toISOString()}`,
        details: { reason },
      },
      now,
    );
  });
}
