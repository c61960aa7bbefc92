// The management cluster's session reconciler, pure: a Session, the latest report of its operator and
// what the worker knows of its cluster → the Session's next status, what to do to its mirror, and the
// Kubernetes Events that tell the story. Placement (Pending/Queued → a cluster) is planned separately,
// for all waiting sessions at once (placement/plan.ts); this plan says only when a session needs it.
//
// Phases (docs/dev/sessions.md): Pending → Queued? → Starting → Running ⇄ Restarting; Running → Pausing →
// Paused → (Queued →) Resuming → Running; any → Terminating → Terminated; Starting/Running → Failed;
// holding phases → Unknown while the cluster is silent. A session with no status yet is Pending.
import { type Session, SessionReason, type SessionStatus } from "@berth/crds";
import {
  at,
  type KubeEventSpec,
  PlanDraft,
  phaseOf,
  type SessionObserved,
  type SessionPlan,
  StatusDraft,
} from "./lifecycle-draft.ts";
import { planPause } from "./lifecycle-pause.ts";
import { planRun } from "./lifecycle-run.ts";
import { planTerminate } from "./lifecycle-terminate.ts";

export {
  connectPaths,
  DEFAULT_TIMING,
  HOLDING_PHASES,
  type KubeEventSpec,
  type LifecycleTiming,
  type MirrorOp,
  phaseOf,
  type SessionObserved,
  type SessionPhaseName,
  type SessionPlan,
  type StatusReport,
  TERMINAL_PHASES,
} from "./lifecycle-draft.ts";

/**
 * The session's next status, what to do to its mirror and the Events to record, by its intent: one plan
 * per intent (lifecycle-run.ts, lifecycle-pause.ts, lifecycle-terminate.ts) over the shared draft
 * (lifecycle-draft.ts). A Terminated session has only its retention clock left, whatever its intent.
 */
export function planSession(o: SessionObserved): SessionPlan {
  const x = new PlanDraft(o);
  if (x.phase === "Terminated") {
    const s = o.session;
    const ended = Date.parse(s.status?.terminatedAt ?? s.metadata.creationTimestamp ?? o.now.toISOString());
    const due = ended + x.timing.terminatedRetentionMs - o.now.getTime();
    if (due <= 0) x.plan.deleteResource = true;
    else x.plan.requeueAfterMs = due;
    return x.plan;
  }
  const desired = o.session.spec.desiredState;
  if (desired === "Terminated") planTerminate(x);
  else if (desired === "Paused") planPause(x);
  else planRun(x);
  return x.finish();
}

/** Status of a session the placement pass put on a cluster (then the worker writes its mirror). */
export function placedStatus(
  s: Session,
  p: { clusterId: string; reason: string; message: string; assignment?: { node: string; cards: string[] } },
  gpuModel: string,
  now: Date,
): { status: SessionStatus; events: KubeEventSpec[] } {
  const d = new StatusDraft(s, now);
  // Queued after a pause, not after a later placement (a resumed session whose node was lost).
  const pausedAt = s.status?.pausedAt;
  const resuming =
    phaseOf(s) === "Paused" ||
    (phaseOf(s) === "Queued" &&
      pausedAt !== undefined &&
      !(Date.parse(s.status?.scheduledAt ?? "") > Date.parse(pausedAt)));
  d.phase(resuming ? "Resuming" : "Starting")
    .set("cluster", p.clusterId)
    .set("gpuModel", gpuModel)
    .set("scheduledAt", at(now))
    .set("queue", undefined)
    .set("node", undefined)
    .set("gpuDevices", undefined)
    // The cards a sharing layer's cluster was given; the mirror pins the pod to them.
    .set("gpuAssignment", p.assignment)
    .condition("Scheduled", "True", p.reason, p.message)
    .condition("Ready", "False", SessionReason.PodPending, "waiting for the pod");
  d.status.observedGeneration = s.metadata.generation ?? d.status.observedGeneration;
  // No Event: placing is an intermediate step; the Scheduled condition keeps why, and the Started (or
  // Resumed) Event that follows says where it runs.
  return { status: d.status, events: [] };
}

/** Status of a session that waits for room; undefined when its place in the queue did not change. */
export function waitingStatus(
  s: Session,
  w: { position: number; reason: string; message: string },
  now: Date,
  since?: string,
): { status?: SessionStatus; events: KubeEventSpec[] } {
  const d = new StatusDraft(s, now);
  const entering = phaseOf(s) !== "Queued";
  d.phase("Queued")
    .set("queue", { position: w.position, reason: w.message })
    // Millisecond precision on purpose: the queue orders by it (see queueSince).
    // A resumed session's queuedAt is that of its wait before it ran: it queues from the resume.
    .set(
      "queuedAt",
      phaseOf(s) === "Paused" ? (since ?? now.toISOString()) : (s.status?.queuedAt ?? since ?? now.toISOString()),
    )
    .condition("Scheduled", "False", w.reason, w.message);
  if (!d.changed) return { events: [] };
  d.status.observedGeneration = s.metadata.generation ?? d.status.observedGeneration;
  return { status: d.status, events: entering ? [{ type: "Normal", reason: "Queued", message: w.message }] : [] };
}

/**
 * Where a waiting session stands in the age order: since it was queued; a session never queued yet,
 * since it was accepted (the API's millisecond annotation); one resumed from a pause, since now.
 */
export function queueSince(s: Session, now: Date): string {
  // Before queuedAt: a resumed session keeps the one of its first wait (placement does not clear it).
  if (phaseOf(s) === "Paused") return now.toISOString();
  if (s.status?.queuedAt) return s.status.queuedAt;
  return s.metadata.annotations?.["berth.dev/created-at"] ?? s.metadata.creationTimestamp ?? now.toISOString();
}
