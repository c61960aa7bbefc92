// The management cluster's session reconciler, pure: a Session, the latest report of its operator and
// what the worker knows of its cluster → the Session's next status, what to do to its mirror, and the
// Kubernetes Events that tell the story. Placement (Pending/Queued → a cluster) is planned separately,
// for all waiting sessions at once (placement/plan.ts); this plan says only when a session needs it.
//
// Phases (docs/dev/sessions.md): Pending → Queued? → Starting → Running ⇄ Restarting; Running → Pausing →
// Paused → (Queued →) Resuming → Running; any → Terminating → Terminated; Starting/Running → Failed;
// holding phases → Unknown while the cluster is silent. A session with no status yet is Pending.
import {
  type Condition,
  PAUSE_REASON_ANNOTATION,
  type Session,
  SessionReason,
  type SessionStatus,
  setCondition,
  toTimestamp,
} from "@berth/crds";

export type SessionPhaseName = NonNullable<SessionStatus["phase"]>;

/** Phases in which a session holds (or is about to hold) GPUs on `status.cluster`. */
export const HOLDING_PHASES: readonly SessionPhaseName[] = [
  "Starting",
  "Resuming",
  "Running",
  "Restarting",
  "Pausing",
  "Terminating",
  "Unknown",
];
export const TERMINAL_PHASES: readonly SessionPhaseName[] = ["Terminated"];

export interface StatusReport {
  phase: string;
  node?: string | null;
  gpuDevices?: string[] | null;
  reason?: string | null;
  message?: string | null;
  /** The mirror revision it reflects; the worker drops reports older than the session's current one. */
  revision: number;
  at: string;
}

export interface LifecycleTiming {
  /** A Terminated Session resource is deleted after this long (history stays in Postgres). */
  terminatedRetentionMs: number;
  /** A pod that finds no node for this long makes the session look for another cluster. */
  unschedulableMs: number;
  /** Pausing/Terminating on a silent cluster gives up waiting for confirmation after this long. */
  silentClusterGiveUpMs: number;
  /** How often to look again at a mirror being deleted. */
  recheckMs: number;
}

export const DEFAULT_TIMING: LifecycleTiming = {
  terminatedRetentionMs: 24 * 3600_000,
  unschedulableMs: 60_000,
  silentClusterGiveUpMs: 10 * 60_000,
  recheckMs: 5_000,
};

export interface SessionObserved {
  session: Session;
  now: Date;
  /** The latest current report from `status.cluster`, if any. */
  report?: StatusReport;
  /** What the worker knows of `status.cluster`: undefined when the session has none. */
  cluster?: { registered: boolean; reporting: boolean };
  /** Whether the mirror exists on `status.cluster`, as last seen. */
  mirror: "present" | "absent" | "unknown";
  /** The inventory says `status.node` is gone or not ready. */
  nodeLost?: boolean;
  /** Since when the current report has said Unschedulable (tracked by the worker). */
  unschedulableSince?: Date;
  /** Restarts asked for (annotation) and restarts already written to the mirror. */
  restartsRequested: number;
  restartsApplied: number;
  timing?: LifecycleTiming;
}

export type MirrorOp =
  | { op: "ensure" }
  | { op: "restart"; restartCount: number }
  | { op: "delete"; propagation: "Background" };

export interface KubeEventSpec {
  type: "Normal" | "Warning";
  reason: string;
  message: string;
}

export interface SessionPlan {
  /** The next status; absent when nothing changed (no write). */
  status?: SessionStatus;
  mirror?: MirrorOp;
  /** Hand the session to the placement pass (Pending, Queued, resuming, placed again). */
  needsPlacement: boolean;
  /** Remember not to place it on this cluster again for a while. */
  avoidCluster?: string;
  deleteResource: boolean;
  events: KubeEventSpec[];
  requeueAfterMs?: number;
}

export function phaseOf(s: Session): SessionPhaseName {
  return s.status?.phase ?? "Pending";
}

/** Builds the next status step by step; `changed` says whether any step changed something. */
class StatusDraft {
  status: SessionStatus;
  readonly #before: string;
  readonly #now: Date;
  constructor(s: Session, now: Date) {
    this.status = structuredClone(s.status ?? {});
    this.#before = JSON.stringify(this.status);
    this.#now = now;
  }
  phase(p: SessionPhaseName): this {
    this.status.phase = p;
    return this;
  }
  condition(type: string, status: Condition["status"], reason: string, message: string): this {
    this.status.conditions = setCondition(this.status.conditions, { type, status, reason, message }, this.#now);
    return this;
  }
  set<K extends keyof SessionStatus>(k: K, v: SessionStatus[K] | undefined): this {
    if (v === undefined) delete this.status[k];
    else this.status[k] = v;
    return this;
  }
  get changed(): boolean {
    return JSON.stringify(this.status) !== this.#before;
  }
}

const at = (d: Date) => toTimestamp(d);

export function connectPaths(resourceName: string): NonNullable<SessionStatus["connect"]> {
  return {
    lab: `/proxy/${resourceName}/lab`,
    terminal: `/proxy/${resourceName}/terminal`,
    code: `/proxy/${resourceName}/code/`,
  };
}

export function planSession(o: SessionObserved): SessionPlan {
  const timing = o.timing ?? DEFAULT_TIMING;
  const s = o.session;
  const phase = phaseOf(s);
  const desired = s.spec.desiredState;
  const d = new StatusDraft(s, o.now);
  const plan: SessionPlan = { needsPlacement: false, deleteResource: false, events: [] };
  const event = (type: KubeEventSpec["type"], reason: string, message: string) =>
    plan.events.push({ type, reason, message });
  const finish = (): SessionPlan => {
    if (d.changed) {
      d.status.observedGeneration = s.metadata.generation ?? d.status.observedGeneration;
      plan.status = d.status;
    }
    return plan;
  };
  const holds = s.status?.cluster !== undefined && HOLDING_PHASES.includes(phase);
  const clusterName = s.status?.cluster ?? "";

  // --- Terminated: only the retention clock is left ---------------------------------------------------
  if (phase === "Terminated") {
    const ended = Date.parse(s.status?.terminatedAt ?? s.metadata.creationTimestamp ?? o.now.toISOString());
    const due = ended + timing.terminatedRetentionMs - o.now.getTime();
    if (due <= 0) plan.deleteResource = true;
    else plan.requeueAfterMs = due;
    return plan;
  }

  const becomeTerminated = (reason: string, message: string) => {
    d.phase("Terminated")
      .set("terminatedAt", at(o.now))
      .set("node", undefined)
      .set("gpuDevices", undefined)
      .set("queue", undefined)
      .set("connect", undefined)
      .condition("Ready", "False", reason, message)
      .condition("Billable", "False", SessionReason.NotRunning, "the session is terminated");
    event("Normal", SessionReason.Terminated, message);
    plan.requeueAfterMs = timing.terminatedRetentionMs;
  };

  // Who paused: the user (API), or the system (billing: InsufficientCredits), said by an annotation.
  const pauseReason = s.metadata.annotations?.[PAUSE_REASON_ANNOTATION] ?? SessionReason.PausedByUser;
  const becomePaused = (message: string) => {
    d.phase("Paused")
      .set("pausedAt", at(o.now))
      .set("cluster", undefined)
      .set("node", undefined)
      .set("gpuDevices", undefined)
      .set("queue", undefined)
      .set("connect", undefined)
      .condition("Ready", "False", pauseReason, message)
      .condition("Billable", "False", SessionReason.NotRunning, "the session is paused");
    event(pauseReason === SessionReason.PausedByUser ? "Normal" : "Warning", pauseReason, message);
  };

  /** Waiting for the mirror to go (pause, terminate): gone when reported Terminated or seen absent. */
  const mirrorGone = o.report?.phase === "Terminated" || o.mirror === "absent" || o.cluster?.registered === false;
  const silentTooLong = () => {
    if (o.cluster?.reporting !== false) return false;
    const since = Date.parse(s.status?.conditions?.find((c) => c.type === "Ready")?.lastTransitionTime ?? "");
    return Number.isFinite(since) && o.now.getTime() - since >= timing.silentClusterGiveUpMs;
  };

  // --- Terminate ---------------------------------------------------------------------------------------
  if (desired === "Terminated") {
    if (!holds && phase !== "Terminating") {
      // A Failed session's mirror (if still reported) is deleted by the worker's level-based removal.
      becomeTerminated(
        SessionReason.TerminatedByUser,
        phase === "Failed" ? "terminated after it failed" : "terminated; it held no GPU",
      );
      return finish();
    }
    if (phase !== "Terminating") {
      d.phase("Terminating")
        .condition("Ready", "False", SessionReason.TerminatedByUser, `removing the session from ${clusterName}`)
        .condition("Billable", "False", SessionReason.NotRunning, "the session is terminating");
      // No Event: an intermediate step (Terminated follows); the Ready condition says it meanwhile.
      plan.mirror = { op: "delete", propagation: "Background" };
      plan.requeueAfterMs = timing.recheckMs;
      return finish();
    }
    if (mirrorGone) {
      becomeTerminated(SessionReason.TerminatedByUser, `removed from ${clusterName}`);
      return finish();
    }
    if (silentTooLong()) {
      becomeTerminated(
        SessionReason.ClusterNotReporting,
        `${clusterName} stopped reporting; its mirror is deleted once it answers`,
      );
      return finish();
    }
    plan.mirror = { op: "delete", propagation: "Background" };
    plan.requeueAfterMs = timing.recheckMs;
    return finish();
  }

  // --- Pause -------------------------------------------------------------------------------------------
  if (desired === "Paused") {
    if (phase === "Paused") return finish();
    if (!holds && phase !== "Pausing") {
      becomePaused("paused before it was placed");
      return finish();
    }
    if (phase !== "Pausing") {
      d.phase("Pausing")
        .set("connect", undefined)
        .condition("Ready", "False", pauseReason, `deleting the pod on ${clusterName}`)
        .condition("Billable", "False", SessionReason.NotRunning, "the session is pausing");
      // No Event: an intermediate step (Paused follows); the Ready condition says it meanwhile.
      plan.mirror = { op: "delete", propagation: "Background" };
      plan.requeueAfterMs = timing.recheckMs;
      return finish();
    }
    if (mirrorGone || silentTooLong()) {
      becomePaused(
        mirrorGone
          ? `the pod on ${clusterName} is gone and its GPU is free`
          : `${clusterName} stopped reporting; paused without confirmation`,
      );
      return finish();
    }
    plan.mirror = { op: "delete", propagation: "Background" };
    plan.requeueAfterMs = timing.recheckMs;
    return finish();
  }

  // --- Running is desired ------------------------------------------------------------------------------
  if (phase === "Pending" || phase === "Queued" || phase === "Paused") {
    plan.needsPlacement = true;
    return finish();
  }
  if (phase === "Failed") return finish();
  if (phase === "Pausing" || phase === "Terminating") {
    // Intent went back to Running while the mirror was being deleted (not offered by the API, but a
    // kubectl edit can do it): let the deletion finish, then place again.
    if (mirrorGone) {
      d.phase("Pending").set("cluster", undefined).set("node", undefined).set("gpuDevices", undefined);
      plan.needsPlacement = true;
    } else plan.requeueAfterMs = timing.recheckMs;
    return finish();
  }

  // A holding phase: Starting, Resuming, Running, Restarting, Unknown.
  if (o.cluster?.registered === false || s.status?.cluster === undefined) {
    d.phase("Pending")
      .set("cluster", undefined)
      .set("node", undefined)
      .set("gpuDevices", undefined)
      .set("connect", undefined)
      .condition(
        "Scheduled",
        "False",
        SessionReason.ClusterGone,
        `cluster ${clusterName || "(none)"} is no longer registered`,
      )
      .condition("Ready", "False", SessionReason.ClusterGone, "placing the session again");
    event(
      "Warning",
      SessionReason.ClusterGone,
      `cluster ${clusterName} is no longer registered; placing the session again`,
    );
    plan.needsPlacement = true;
    return finish();
  }

  if (o.cluster?.reporting === false) {
    if (phase !== "Unknown") {
      d.phase("Unknown")
        .condition("Ready", "Unknown", SessionReason.ClusterNotReporting, `${clusterName} has not reported for a while`)
        .condition("Billable", "Unknown", SessionReason.ClusterNotReporting, "usage is charged up to the last sample");
      event(
        "Warning",
        SessionReason.ClusterNotReporting,
        `${clusterName} stopped reporting; the session's state is unknown`,
      );
    }
    return finish();
  }

  const replace = (reason: string, message: string, avoid: boolean) => {
    d.phase("Pending")
      .set("cluster", undefined)
      .set("node", undefined)
      .set("gpuDevices", undefined)
      .set("gpuAssignment", undefined)
      .set("connect", undefined)
      .condition("Scheduled", "False", reason, message)
      .condition("Ready", "False", reason, message)
      .condition("Billable", "False", SessionReason.NotRunning, "the session is being placed again");
    event("Warning", reason, message);
    plan.mirror = { op: "delete", propagation: "Background" };
    plan.needsPlacement = true;
    if (avoid) plan.avoidCluster = clusterName;
  };

  const lostNode = s.status?.node ?? s.status?.gpuAssignment?.node;
  if (o.nodeLost && lostNode) {
    replace(
      SessionReason.NodeLost,
      `node ${lostNode} of ${clusterName} was lost or drained; placing the session again`,
      false,
    );
    return finish();
  }

  if (
    o.restartsRequested > o.restartsApplied &&
    (phase === "Running" || phase === "Unknown" || phase === "Restarting")
  ) {
    d.phase("Restarting")
      .set("connect", undefined)
      .condition("Ready", "False", SessionReason.RestartRequested, "replacing the pod");
    event("Normal", SessionReason.RestartRequested, "replacing the pod");
    plan.mirror = { op: "restart", restartCount: o.restartsRequested };
    return finish();
  }

  const r = o.report;
  if (!r) {
    if (phase === "Unknown")
      d.phase("Starting").condition("Ready", "False", SessionReason.PodPending, `${clusterName} is reporting again`);
    if (o.mirror !== "present") plan.mirror = { op: "ensure" };
    return finish();
  }

  switch (r.phase) {
    case "Running": {
      if (phase !== "Running") {
        d.phase("Running")
          .set("startedAt", phase === "Unknown" && s.status?.startedAt ? s.status.startedAt : at(o.now))
          .set("connect", connectPaths(s.metadata.name as string))
          .condition("Dispatched", "True", SessionReason.MirrorCreated, `written to ${clusterName}`)
          .condition("Ready", "True", SessionReason.PodRunning, r.node ? `running on ${r.node}` : "running")
          .condition("Billable", "True", SessionReason.Metering, "usage is charged at the offering's rate");
        // The one Event of a placement (Scheduled and Resumed are only conditions): where it runs.
        event(
          "Normal",
          phase === "Resuming" ? SessionReason.Resumed : SessionReason.Started,
          `${phase === "Resuming" ? "resumed" : "running"} on ${r.node ?? "a node"} of ${clusterName}`,
        );
      }
      d.set("node", r.node ?? undefined).set(
        "gpuDevices",
        r.gpuDevices && r.gpuDevices.length > 0 ? r.gpuDevices : undefined,
      );
      return finish();
    }
    case "Failed": {
      const reason =
        r.reason === "ImagePullFailed"
          ? SessionReason.ImagePullFailed
          : r.reason === SessionReason.ClaimNotBound
            ? SessionReason.ClaimNotBound
            : SessionReason.PodFailed;
      d.phase("Failed")
        .set("connect", undefined)
        .set("node", undefined)
        .set("gpuDevices", undefined)
        .condition("Ready", "False", reason, r.message || "the pod failed")
        .condition("Billable", "False", SessionReason.NotRunning, "the session failed");
      event("Warning", reason, `${r.message || "the pod failed"}; its GPU is released`);
      plan.mirror = { op: "delete", propagation: "Background" };
      return finish();
    }
    case "Terminated": {
      // The mirror vanished although the session should run (someone deleted it): write it again.
      d.phase(phase === "Running" ? "Starting" : phase).condition(
        "Ready",
        "False",
        SessionReason.MirrorLost,
        `the mirror on ${clusterName} disappeared; writing it again`,
      );
      if (phase === "Running")
        event("Warning", SessionReason.MirrorLost, `the mirror on ${clusterName} disappeared; writing it again`);
      plan.mirror = { op: "ensure" };
      return finish();
    }
    default: {
      // Starting, Restarting, Terminating as seen by the operator: the pod is not (yet) serving.
      if (
        r.reason === SessionReason.Unschedulable &&
        o.unschedulableSince &&
        o.now.getTime() - o.unschedulableSince.getTime() >= timing.unschedulableMs
      ) {
        replace(
          SessionReason.Unschedulable,
          `no node of ${clusterName} had room for ${Math.round(timing.unschedulableMs / 1000)} s; placing the session again`,
          true,
        );
        return finish();
      }
      const keep = phase === "Restarting" || phase === "Resuming" ? phase : "Starting";
      if (phase === "Running")
        event(
          "Warning",
          r.reason === "PodPending" ? "PodReplaced" : (r.reason ?? "PodPending"),
          r.message || "the pod is being replaced",
        );
      d.phase(keep)
        .set("connect", undefined)
        .condition(
          "Ready",
          "False",
          r.reason === SessionReason.Unschedulable || r.reason === SessionReason.WaitingForClaim
            ? r.reason
            : SessionReason.PodPending,
          r.reason === SessionReason.Unschedulable || r.reason === SessionReason.WaitingForClaim
            ? (r.message ?? "")
            : "waiting for the pod",
        );
      if (r.reason === SessionReason.Unschedulable) plan.requeueAfterMs = timing.unschedulableMs;
      return finish();
    }
  }
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
