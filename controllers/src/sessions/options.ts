// The session controller's settings and counters, shared by its parts (controller.ts wires them).

import { DEFAULT_SESSIONS_NAMESPACE } from "@berth/crds";
import { DEFAULT_CONSTRAINTS } from "../placement/constraints.ts";
import type { Constraint, PlacementPolicy } from "../placement/types.ts";
import { DEFAULT_TIMING, type LifecycleTiming } from "./lifecycle.ts";

export interface SessionControllerOptions {
  policy: PlacementPolicy;
  constraints: readonly Constraint[];
  timing: LifecycleTiming;
  /** A cluster whose operator has not called for this long is "not reporting": its sessions turn Unknown. */
  reportGraceMs: number;
  /** Sessions reconciled at once. */
  concurrency: number;
  /** Mirrors' namespace on GPU clusters. */
  sessionsNamespace: string;
  /** Every session is looked at again this often, changed or not (level-based safety net). */
  resyncMs: number;
  /** Cluster liveness and inventory are re-read this often even without notifications. */
  pollMs: number;
  /** Stream events are kept this long. */
  eventRetentionMs: number;
  /** A volume's claim no session has used for this long is released (controllers/src/sessions/claims.ts). */
  claimIdleMs: number;
  /** Kubernetes Events' reporting component; also the field manager of the mirrors it applies. */
  component: string;
}

export const DEFAULT_CONTROLLER_OPTIONS: SessionControllerOptions = {
  policy: "binpack",
  constraints: DEFAULT_CONSTRAINTS,
  timing: DEFAULT_TIMING,
  reportGraceMs: 60_000,
  concurrency: 64,
  sessionsNamespace: DEFAULT_SESSIONS_NAMESPACE,
  resyncMs: 60_000,
  pollMs: 5_000,
  eventRetentionMs: 24 * 3600_000,
  claimIdleMs: 15 * 60_000,
  component: "berth-worker",
};

/** Counters for tests and the bench: what the worker wrote where. */
export interface WriteCounts {
  statusWrites: number;
  /** Statuses of an interim phase, recorded in the history row instead of the resource. */
  interimWrites: number;
  conflicts: number;
  events: number;
  mirrorCreates: number;
  mirrorUpdates: number;
  mirrorDeletes: number;
  resourceDeletes: number;
  placements: number;
  placementPasses: number;
  /** Round trips that took mirror revisions for a whole placement pass. */
  revisionBatches: number;
  /** Mirror writes held back because a volume's claim was being released (retried after it is gone). */
  releaseWaits: number;
}

export const noWrites = (): WriteCounts => ({
  statusWrites: 0,
  interimWrites: 0,
  conflicts: 0,
  events: 0,
  mirrorCreates: 0,
  mirrorUpdates: 0,
  mirrorDeletes: 0,
  resourceDeletes: 0,
  placements: 0,
  placementPasses: 0,
  revisionBatches: 0,
  releaseWaits: 0,
});
