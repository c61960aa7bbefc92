// Reclaim by pausing (docs/dev/fair-share.md), one level-based pass of the worker's CapacityReclaimLoop:
//   1. guaranteed sessions that wait while borrowed sessions hold their GPU model, in placement's order:
//      the pure core's planReclaims (controllers/src/fairshare/reclaim.ts: one sort per pass, one reclaim
//      per blocked need, none for a need whose room is free or under notice already) picks borrowed
//      sessions past their minimum runtime (idle first, most over fair share, lowest priority, newest);
//      each is warned at once
//      (status.capacityReclaim, a notification, a Kubernetes Event, a `session.reclaim_warning` stream
//      event and through it a webhook) and logged in capacity_reclaims;
//   2. a warning whose guaranteed session no longer waits (placed, cancelled) is withdrawn;
//   3. at pauseAt (grace period, default 10 min, 0 allowed) the session is paused by the system pause path
//      (volumes kept), reason CapacityReclaimed;
//   4. once Paused, it is asked to run again: placement puts it behind guaranteed work and ahead of newer
//      borrowed work (controllers/src/sessions/placement-pass.ts), so it resumes when room returns;
//   5. once it runs again the notice is cleared and the log row closed.
// Each step writes only when its state is due, so a quiet fleet costs reads only.
import {
  decayedUsage,
  type FairRequest,
  fairComparator,
  type Holder,
  managed,
  planReclaims,
  resolveSettings,
  scoreRequests,
} from "@berth/controllers";
import {
  gpuOccupancy,
  resourcePath,
  type Session,
  SessionKind,
  SessionReason,
  sessionEventBody,
  sessionIdOf,
  sessionPath,
  shareOfRow,
  withInterim,
} from "@berth/crds";
import type { Knex } from "knex";
import type { Logger } from "pino";
import { inventoryByClusterModel } from "../../db/operations/sessions/fleetModels.ts";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import { viewFromResource } from "../../db/operations/sessions/view.ts";
import { fairShareSetting } from "../sessions/capacityClass.ts";
import { tellOwnerPaused, warnOwner } from "../sessions/ownerNotices.ts";
import type { SessionsRuntime } from "../sessions/runtime.ts";
import { projectOrganizations } from "./guarantees.ts";
import { settingsOf, shareTreeOf } from "./tree.ts";
import { usageIntervals } from "./usage.ts";

export interface CapacityReclaimContext {
  db: Knex;
  clock: { now(): Date };
  log: Logger;
  sessions: SessionsRuntime;
  /** The sessions domain's system pause; true when paused. */
  pause(sessionId: string, reason: string): Promise<boolean>;
  /**
   * The sessions domain's system resume (domain/sessions/resumeForSystem.ts): a person's resume gate (limits,
   * credits); refused, it stays paused and its owner is told why. True when asked to run again.
   */
  resume(row: SessionRow, s: Session): Promise<boolean>;
}

export interface CapacityReclaimResult {
  warned: { session: string; for: string }[];
  withdrawn: string[];
  paused: string[];
  requeued: string[];
  resumed: string[];
}

type Notice = NonNullable<NonNullable<Session["status"]>["capacityReclaim"]>;

const HOLDING = new Set(["Starting", "Resuming", "Running", "Restarting", "Pausing"]);
const WAITING = new Set(["Pending", "Queued"]);

async function allSessions(rt: SessionsRuntime): Promise<Session[]> {
  const res = await rt.kube.request<{ items: unknown[] }>("GET", `${resourcePath(SessionKind)}?resourceVersion=0`);
  if (res.status !== 200) throw new Error(`listing sessions: ${res.status}`);
  const out: Session[] = [];
  for (const item of res.body.items ?? []) {
    const p = SessionKind.schema.safeParse(item);
    if (p.success) out.push(p.data);
  }
  return out;
}

const idOf = (s: Session) => sessionIdOf(s.metadata.name as string);
const phaseOf = (s: Session) => s.status?.phase ?? "Pending";

export async function reclaimCapacity(c: CapacityReclaimContext): Promise<CapacityReclaimResult> {
  const now = c.clock.now();
  const result: CapacityReclaimResult = { warned: [], withdrawn: [], paused: [], requeued: [], resumed: [] };
  const resources = await allSessions(c.sessions);
  if (resources.length === 0) return result;
  const rows = new Map<string, SessionRow>();
  const ids = resources.map(idOf);
  for (let i = 0; i < ids.length; i += 1000)
    for (const r of (await c.db("sessions").whereIn("id", ids.slice(i, i + 1000))) as SessionRow[]) rows.set(r.id, r);
  // The resource overlaid with the worker's interim status (Starting, Resuming, Pausing are kept off it).
  const sessions = resources.flatMap((s) => {
    const row = rows.get(idOf(s));
    return row ? [{ s: withInterim(s, row.interim_status), row }] : [];
  });
  const byId = new Map(sessions.map((x) => [x.row.id, x]));

  // Steps 2–5 first: they act on notices already out.
  for (const { s, row } of sessions) {
    const n = s.status?.capacityReclaim;
    if (!n) continue;
    try {
      const phase = phaseOf(s);
      if (!n.pausedAt) {
        const target = byId.get(n.for);
        const stillWaits =
          target &&
          target.s.spec.desiredState === "Running" &&
          WAITING.has(phaseOf(target.s)) &&
          !target.s.status?.cluster;
        if (!stillWaits && Date.parse(n.pauseAt) > now.getTime()) {
          if ((await writeNotice(c.sessions, s, null)) !== undefined) {
            await c
              .db("capacity_reclaims")
              .where({ session_id: row.id })
              .whereNull("paused_at")
              .whereNull("withdrawn_at")
              .update({ withdrawn_at: now });
            result.withdrawn.push(row.id);
          }
          continue;
        }
        if (Date.parse(n.pauseAt) <= now.getTime() && phase === "Running" && s.spec.desiredState === "Running") {
          if (await c.pause(row.id, SessionReason.CapacityReclaimed)) {
            await markPaused(c, row, n, now);
            result.paused.push(row.id);
          }
        }
        // Paused by the reclaim: the notice records it (placement then takes it from its first start),
        // and it is asked to run again at once.
        if (phase === "Paused" && s.spec.desiredState === "Paused") {
          const written = await writeNotice(c.sessions, s, { ...n, pausedAt: s.status?.pausedAt ?? now.toISOString() });
          if (
            written !== undefined &&
            (await askToRun(c, { ...s, metadata: { ...s.metadata, resourceVersion: written } }, row))
          )
            result.requeued.push(row.id);
        }
        continue;
      }
      if (phase === "Paused" && s.spec.desiredState === "Paused") {
        if (await askToRun(c, s, row)) result.requeued.push(row.id);
        continue;
      }
      if (phase === "Running" && Date.parse(s.status?.startedAt ?? "") > Date.parse(n.pausedAt)) {
        if ((await writeNotice(c.sessions, s, null)) !== undefined) {
          await c
            .db("capacity_reclaims")
            .where({ session_id: row.id })
            .whereNull("resumed_at")
            .whereNotNull("paused_at")
            .update({ resumed_at: now });
          result.resumed.push(row.id);
        }
      }
    } catch (err) {
      c.log.warn({ err, session: row.id }, "capacity reclaim: a session's step failed; retried on the next pass");
    }
  }

  // Step 1: new reclaims for guaranteed sessions that wait for a managed model.
  const policies = await c.sessions.catalog.policies();
  const tree = shareTreeOf(policies, await projectOrganizations(c));
  const waiting = sessions.filter(
    ({ s, row }) =>
      (s.spec.capacityClass ?? "guaranteed") === "guaranteed" &&
      s.spec.desiredState === "Running" &&
      WAITING.has(phaseOf(s)) &&
      !s.status?.cluster &&
      managed(tree, row.gpu_model),
  );
  if (waiting.length === 0) return result;

  const cardsOf = (row: SessionRow) =>
    gpuOccupancy(row.gpu_count, row.gpu_slices_per_card ?? undefined, shareOfRow(row));
  const holders: Holder[] = sessions
    .filter(({ s }) => s.status?.cluster && s.status.gpuModel && HOLDING.has(phaseOf(s)))
    .map(({ s, row }) => ({
      key: row.id,
      clusterId: s.status?.cluster as string,
      gpuModel: s.status?.gpuModel as string,
      cards: cardsOf(row),
      capacityClass: s.spec.capacityClass ?? "guaranteed",
      priority: s.spec.priority,
      startedAt: s.status?.startedAt ?? row.created_at.toISOString(),
      createdAt: row.created_at.toISOString(),
      idle: (s.status?.reclaim?.idle?.warned.length ?? 0) > 0,
      org: row.organization_id,
      project: row.project_id ?? "",
      user: row.owner_id,
      ...(s.status?.capacityReclaim && !s.status.capacityReclaim.pausedAt ? { reclaiming: true } : {}),
    }));
  const inventory = await inventoryByClusterModel(c.db);
  const settings = resolveSettings(settingsOf(policies));
  const pastMinRuntime = (h: Holder) =>
    now.getTime() - Date.parse(h.startedAt) >=
    fairShareSetting(policies, { organizationId: h.org, projectId: h.project || null }, "minRuntimeSeconds") * 1000;
  const usage = decayedUsage(
    await usageIntervals(c.db, now, settings.halfLifeMs),
    now.toISOString(),
    settings.halfLifeMs,
  );

  // The guaranteed queue in placement's own order (priority, then fair score), so the head is served
  // first and room free now goes to the requests placement would give it to.
  const requests: FairRequest[] = waiting.map(({ s, row }) => ({
    key: row.id,
    gpuModel: row.gpu_model,
    gpuCount: row.gpu_count,
    cards: cardsOf(row),
    priority: s.spec.priority,
    since: s.status?.queuedAt ?? row.created_at.toISOString(),
    volumes: [],
    org: row.organization_id,
    project: row.project_id ?? "",
    user: row.owner_id,
    mayBorrow: false,
  }));
  requests.sort(fairComparator(scoreRequests(tree, usage, requests, now.toISOString(), settings)));
  const free = new Map<string, number>();
  for (const r of inventory) free.set(`${r.gpu_model}@${r.cluster_id}`, r.allocatable);
  for (const h of holders)
    free.set(`${h.gpuModel}@${h.clusterId}`, (free.get(`${h.gpuModel}@${h.clusterId}`) ?? 0) - h.cards);
  const pinOf = new Map(waiting.map(({ row }) => [row.id, row.cluster_pin]));
  const choices = planReclaims({
    now: now.toISOString(),
    // Each borrowed session's own minimum runtime (its organization's and project's policy) is applied
    // to the holders here.
    settings: { ...settings, minRuntimeMs: 0 },
    tree,
    usage,
    holders: holders.filter((h) => h.capacityClass !== "borrowed" || h.reclaiming || pastMinRuntime(h)),
    needs: requests.map((r) => ({
      key: r.key,
      gpuModel: r.gpuModel,
      cards: r.cards,
      eligibleClusters: inventory
        .filter((i) => i.gpu_model === r.gpuModel && (!pinOf.get(r.key) || i.cluster_id === pinOf.get(r.key)))
        .map((i) => i.cluster_id),
    })),
    free,
  });

  for (const choice of choices) {
    const forRow = byId.get(choice.forKey)?.row as SessionRow;
    for (const v of choice.victims) {
      const victim = byId.get(v.key);
      if (!victim) continue;
      try {
        if (await warn(c, victim.s, victim.row, forRow, v.why, v.cards, now, policies))
          result.warned.push({ session: v.key, for: forRow.id });
      } catch (err) {
        c.log.warn({ err, session: v.key }, "capacity reclaim: warning failed; retried on the next pass");
      }
    }
  }
  return result;
}

/**
 * status.capacityReclaim by a merge patch with the resourceVersion read: the new resourceVersion, or
 * undefined on a conflict (the next pass reads afresh).
 */
async function writeNotice(rt: SessionsRuntime, s: Session, notice: Notice | null): Promise<string | undefined> {
  const res = await rt.kube.request<{ metadata?: { resourceVersion?: string } }>(
    "PATCH",
    sessionPath(s.metadata.namespace as string, s.metadata.name as string, "status"),
    { body: { metadata: { resourceVersion: s.metadata.resourceVersion }, status: { capacityReclaim: notice } } },
  );
  if (res.status === 409 || res.status === 404) return undefined;
  if (res.status >= 300) throw new Error(`writing the reclaim notice of ${s.metadata.name}: ${res.status}`);
  return res.body?.metadata?.resourceVersion ?? s.metadata.resourceVersion ?? "";
}

const clockTime = (d: Date) => `${d.toISOString().slice(11, 19)} UTC`;

async function warn(
  c: CapacityReclaimContext,
  s: Session,
  row: SessionRow,
  forRow: SessionRow,
  why: string,
  cards: number,
  now: Date,
  policies: Awaited<ReturnType<SessionsRuntime["catalog"]["policies"]>>,
): Promise<boolean> {
  const grace = fairShareSetting(
    policies,
    { organizationId: row.organization_id, projectId: row.project_id },
    "reclaimGraceSeconds",
  );
  const pauseAt = new Date(now.getTime() + grace * 1000);
  const needing = (await c.db("organizations").where({ id: forRow.organization_id }).first("name")) as
    | { name: string }
    | undefined;
  const reason = `A guaranteed session of ${needing?.name ?? forRow.organization_id} needs ${row.gpu_model} (${why}).`;
  const notice: Notice = { noticeAt: now.toISOString(), pauseAt: pauseAt.toISOString(), for: forRow.id, reason };
  if ((await writeNotice(c.sessions, s, notice)) === undefined) return false;
  const name = row.display_name ?? row.id;
  const minutesLeft = Math.max(0, Math.ceil(grace / 60));
  const view = JSON.parse(
    JSON.stringify(viewFromResource(row, { ...s, status: { ...s.status, capacityReclaim: notice } })),
  ) as Record<string, unknown>;
  await c.db.transaction(async (tx) => {
    await tx("capacity_reclaims").insert({
      id: `rcl_${row.id.slice(4)}${now.getTime().toString(36)}`,
      session_id: row.id,
      organization_id: row.organization_id,
      project_id: row.project_id,
      owner_id: row.owner_id,
      for_session_id: forRow.id,
      for_organization_id: forRow.organization_id,
      gpu_model: row.gpu_model,
      gpus: cards,
      reason: why,
      noticed_at: now,
      pause_at: pauseAt,
    });
    await warnOwner(
      tx,
      row,
      {
        kind: "session.reclaim_warning",
        title:
          grace === 0 ? "Borrowed session is being paused" : `Borrowed session will be paused in ${minutesLeft} min`,
        body: `Your session ${name} runs on borrowed capacity, and a guaranteed session needs its GPU. It will be paused at ${clockTime(pauseAt)}; its volumes are kept and it resumes ahead of new work when room returns. Save your work.`,
        data: { session_id: row.id, deadline: pauseAt.toISOString(), for_session_id: forRow.id, reason: why },
        dedupeKey: `reclaim_warning:${row.id}:${now.toISOString()}`,
        view,
        warning: {
          kind: "reclaim",
          reason: SessionReason.CapacityReclaimed,
          deadline: pauseAt.toISOString(),
          minutes_left: minutesLeft,
          for_session_id: forRow.id,
        },
      },
      now,
    );
  });
  await recordEvent(
    c.sessions,
    s,
    "Warning",
    SessionReason.CapacityReclaimWarning,
    `${reason} Paused at ${pauseAt.toISOString()}.`,
    now,
  ).catch((err: unknown) => c.log.debug({ err: String(err) }, "a Kubernetes Event was not recorded"));
  return true;
}

async function markPaused(c: CapacityReclaimContext, row: SessionRow, n: Notice, now: Date): Promise<void> {
  const name = row.display_name ?? row.id;
  await c.db.transaction(async (tx) => {
    await tx("capacity_reclaims")
      .where({ session_id: row.id })
      .whereNull("paused_at")
      .whereNull("withdrawn_at")
      .update({ paused_at: now });
    await tellOwnerPaused(
      tx,
      row,
      {
        title: "Session paused: borrowed GPU reclaimed",
        body: `Your session ${name} was paused to give its borrowed GPU back to a guaranteed session. Its volumes are kept; it resumes ahead of new work when room returns.`,
        data: { session_id: row.id, reason: "capacity_reclaimed", for_session_id: n.for },
        actorId: "system:fair-share",
        actorReason: "borrowed capacity reclaimed",
        requestId: `reclaim:capacity:${row.id}:${now.toISOString()}`,
        details: { reason: SessionReason.CapacityReclaimed, for_session_id: n.for },
      },
      now,
    );
  });
}

/**
 * The paused session wants to run again (its notice, now with pausedAt, keeps its place ahead of new work),
 * through the same gate as its owner's resume; refused (no credits), the next pass asks again.
 */
async function askToRun(c: CapacityReclaimContext, s: Session, row: SessionRow): Promise<boolean> {
  return c.resume(row, s);
}

async function recordEvent(
  rt: SessionsRuntime,
  s: Session,
  type: "Normal" | "Warning",
  reason: string,
  message: string,
  now: Date,
) {
  const ns = s.metadata.namespace as string;
  const res = await rt.kube.request("POST", `/api/v1/namespaces/${ns}/events`, {
    body: sessionEventBody(s, { type, reason, message }, "berth-worker", now),
  });
  if (res.status >= 300) throw new Error(`recording event ${reason}: ${res.status}`);
}
