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
// The parts: here, the reads and the order of the steps; reclaimChoices.ts decides step 1 (pure);
// reclaimNotice.ts writes a notice, its warning and its pause.
import { decayedUsage, managed, resolveSettings } from "@berth/controllers";
import { resourcePath, type Session, SessionKind, SessionReason, sessionIdOf, withInterim } from "@berth/crds";
import { inventoryByClusterModel } from "../../db/operations/sessions/fleetModels.ts";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import type { SessionsRuntime } from "../sessions/runtime.ts";
import { projectOrganizations } from "./guarantees.ts";
import { chooseReclaims, phaseOf } from "./reclaimChoices.ts";
import { markPaused, type NoticeDeps, warn, writeNotice } from "./reclaimNotice.ts";
import { settingsOf, shareTreeOf } from "./tree.ts";
import { usageIntervals } from "./usage.ts";

export interface CapacityReclaimContext extends NoticeDeps {
  clock: { now(): Date };
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

  const inventory = await inventoryByClusterModel(c.db);
  const settings = resolveSettings(settingsOf(policies));
  const usage = decayedUsage(
    await usageIntervals(c.db, now, settings.halfLifeMs),
    now.toISOString(),
    settings.halfLifeMs,
  );
  const choices = chooseReclaims({ now, sessions, waiting, policies, tree, settings, usage, inventory });

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
 * The paused session wants to run again (its notice, now with pausedAt, keeps its place ahead of new work),
 * through the same gate as its owner's resume; refused (no credits), the next pass asks again.
 */
async function askToRun(c: CapacityReclaimContext, s: Session, row: SessionRow): Promise<boolean> {
  return c.resume(row, s);
}
