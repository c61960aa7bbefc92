// What the session plan's intents share (sessions/lifecycle.ts): the observed state, the plan, the status
// drafted step by step, and the two ends a pause or a terminate arrives at.
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
export class StatusDraft {
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

export const at = (d: Date) => toTimestamp(d);

export function connectPaths(resourceName: string): NonNullable<SessionStatus["connect"]> {
  return {
    lab: `/proxy/${resourceName}/lab`,
    terminal: `/proxy/${resourceName}/terminal`,
    code: `/proxy/${resourceName}/code/`,
  };
}

/** One plan being made: what was observed, the status drafted so far, and the rest of the plan. */
export class PlanDraft {
  readonly o: SessionObserved;
  readonly s: Session;
  readonly timing: LifecycleTiming;
  readonly phase: SessionPhaseName;
  readonly d: StatusDraft;
  readonly plan: SessionPlan = { needsPlacement: false, deleteResource: false, events: [] };
  /** The session holds (or is about to hold) GPUs on its cluster. */
  readonly holds: boolean;
  readonly clusterName: string;
  /** Who paused: the user (API), or the system (billing: InsufficientCredits), said by an annotation. */
  readonly pauseReason: string;
  /** Waiting for the mirror to go (pause, terminate): gone when reported Terminated or seen absent. */
  readonly mirrorGone: boolean;

  constructor(o: SessionObserved) {
    this.o = o;
    this.s = o.session;
    this.timing = o.timing ?? DEFAULT_TIMING;
    this.phase = phaseOf(this.s);
    this.d = new StatusDraft(this.s, o.now);
    this.holds = this.s.status?.cluster !== undefined && HOLDING_PHASES.includes(this.phase);
    this.clusterName = this.s.status?.cluster ?? "";
    this.pauseReason = this.s.metadata.annotations?.[PAUSE_REASON_ANNOTATION] ?? SessionReason.PausedByUser;
    this.mirrorGone = o.report?.phase === "Terminated" || o.mirror === "absent" || o.cluster?.registered === false;
  }

  event(type: KubeEventSpec["type"], reason: string, message: string): void {
    this.plan.events.push({ type, reason, message });
  }

  /** The plan, with the drafted status when it changed. */
  finish(): SessionPlan {
    const d = this.d;
    if (d.changed) {
      d.status.observedGeneration = this.s.metadata.generation ?? d.status.observedGeneration;
      this.plan.status = d.status;
    }
    return this.plan;
  }

  /** The cluster has been silent for longer than a pause or terminate waits for its confirmation. */
  silentTooLong(): boolean {
    if (this.o.cluster?.reporting !== false) return false;
    const since = Date.parse(this.s.status?.conditions?.find((c) => c.type === "Ready")?.lastTransitionTime ?? "");
    return Number.isFinite(since) && this.o.now.getTime() - since >= this.timing.silentClusterGiveUpMs;
  }

  becomeTerminated(reason: string, message: string): void {
    this.d
      .phase("Terminated")
      .set("terminatedAt", at(this.o.now))
      .set("node", undefined)
      .set("gpuDevices", undefined)
      .set("queue", undefined)
      .set("connect", undefined)
      .condition("Ready", "False", reason, message)
      .condition("Billable", "False", SessionReason.NotRunning, "the session is terminated");
    this.event("Normal", SessionReason.Terminated, message);
    this.plan.requeueAfterMs = this.timing.terminatedRetentionMs;
  }

  becomePaused(message: string): void {
    const reason = this.pauseReason;
    this.d
      .phase("Paused")
      .set("pausedAt", at(this.o.now))
      .set("cluster", undefined)
      .set("node", undefined)
      .set("gpuDevices", undefined)
      .set("queue", undefined)
      .set("connect", undefined)
      .condition("Ready", "False", reason, message)
      .condition("Billable", "False", SessionReason.NotRunning, "the session is paused");
    this.event(reason === SessionReason.PausedByUser ? "Normal" : "Warning", reason, message);
  }

  /** The mirror is deleted, and the session looked at again soon. */
  deleteMirror(): void {
    this.plan.mirror = { op: "delete", propagation: "Background" };
    this.plan.requeueAfterMs = this.timing.recheckMs;
  }
}
