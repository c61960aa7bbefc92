// The queue ETA's contract (eta.ts estimateQueue; docs/dev/fair-share.md): what it reads of the queue, the
// fleet and finished runs, and the estimate it gives. Apart from types.ts, whose policy and owners it reads,
// because only the ETA and its callers (the API's queue route, the ETA bench) need it.
import type { InventoryNodeView } from "../placement/capacity.ts";
import type { ClusterCapacity, Constraint, PlacementPolicy, PlacementRequest } from "../placement/types.ts";
import type { CapacityClass, Owner, ShareTree } from "./types.ts";

/** A session holding GPUs now, for the forward simulation. */
export interface EtaRunning {
  key: string;
  clusterId: string;
  gpuModel: string;
  gpuCount: number;
  slice?: { memoryMib: number; cores: number };
  /** On a cluster with a sharing layer: its node and cards. */
  assignment?: { node: string; cards: string[] };
  startedAt: string;
  /** Its time limit: it ends by then at the latest. */
  maxRuntimeMs?: number;
  /** Idle since then (no activity), with its idle timeout: it ends by idleSince + idleTimeoutMs at the latest. */
  idleSince?: string;
  idleTimeoutMs?: number;
}

/** A session as fair share's admission reads it (the worker's fair-placement.ts gives the same fields). */
export interface EtaShare extends Owner {
  /** Card equivalents. */
  cards: number;
  /** The class fixed at creation: a borrowed one opted in to borrowing, a guaranteed one did not. */
  capacityClass: CapacityClass;
}

/**
 * Arrivals to expect during the wait (fair share: a lighter organization's new request ranks ahead of a
 * heavier one's older one). Each stream is Poisson; an arrival goes ahead of a waiting request when its
 * score, less the aging the waiting one has over it, is higher (within a priority).
 */
export interface EtaArrivals {
  /** Each waiting request's score now (FairScore.score: higher goes first within a priority). */
  scores: Readonly<Record<string, number>>;
  /** Score a request gains per millisecond it waits. */
  agingPerMs: number;
  streams: readonly {
    /** Expected arrivals per millisecond. */
    ratePerMs: number;
    /** A new arrival's score as it arrives. */
    score: number;
    /** What an arrival asks: one of these at random (recent arrivals of the stream). */
    shapes: readonly Omit<PlacementRequest, "key" | "since">[];
  }[];
}

/** A finished run, to learn lengths from. */
export interface LengthSample {
  gpuModel: string;
  /** Card equivalents; lengths are learned per model, and per size when there are enough of that size. */
  cards: number;
  lengthMs: number;
  /** When it ended: the fallback's admission rate counts recent starts, not lengths. */
  endedAt?: string;
}

export interface EtaInput {
  now: string;
  /** Every session that wants a GPU, in the queue's real order (the comparator below decides it). */
  waiting: readonly PlacementRequest[];
  running: readonly EtaRunning[];
  /** The fleet now (computeCapacity's output): `free` is what placement sees at `now`. */
  clusters: readonly ClusterCapacity[];
  policy: PlacementPolicy;
  constraints?: readonly Constraint[];
  /** Card-level view of clusters with a sharing layer (capacity.ts InventoryNodeView), when any. */
  nodes?: readonly InventoryNodeView[];
  /** The queue's order (fair share's comparator); default placement's compareRequests. */
  compare?: (a: PlacementRequest, b: PlacementRequest) => number;
  /**
   * Lengths of finished runs (the most recent few hundred suffice), with `endedAt`: the fit then reads the
   * running sessions started since the oldest of them ended as lengths in progress.
   */
  history: readonly LengthSample[];
  /** Start times of recent admissions (the fallback's rate). */
  recentStarts: readonly string[];
  /** Each waiting session's own time limit (caps its sampled length once it starts). */
  maxRuntimeMs?: Record<string, number>;
  /** Fewer finished runs than this for a model: depth ÷ recent admission rate. Default 20. */
  minHistory?: number;
  /** Monte Carlo samples. Default 48. */
  samples?: number;
  seed?: number;
  /** How far ahead to simulate; a request not started by then gets p90 = Infinity. Default 7 days. */
  horizonMs?: number;
  /**
   * Lengths: `history` (learned, default) or `max` (every run lasts its time limit: the Slurm-style plan,
   * for the benches' baseline).
   */
  lengths?: "history" | "max";
  /**
   * σ in log space of a lognormal kernel around each finished length (0: the finished lengths as they are).
   * Default in eta.ts, tuned by the ETA bench.
   */
  lengthKernel?: number;
  /**
   * How a length is drawn: `lognormal` (default) fits a lognormal to the lengths — Kaplan–Meier quartiles
   * over recent finished runs and, as lengths in progress, the running sessions — and draws from it past
   * what a session has run; `empirical` draws a finished length, widened by `lengthKernel`. The ETA bench
   * measures both (docs/dev/fair-share.md).
   */
  lengthFit?: "lognormal" | "empirical";
  /**
   * Fair share's admission (admitRequests, as the worker's pass applies it): the share tree and, per key,
   * every waiting and running session's owner, size and class. A borrowed request then starts only within
   * the borrowing and lending limits, even with GPUs free. Absent: every request may take free room.
   */
  fairShare?: { tree: ShareTree; sessions: Readonly<Record<string, EtaShare>> };
  /** Requests expected to arrive while the queue waits, that may rank ahead of waiting ones. */
  arrivals?: EtaArrivals;
  /** Other shapes of a request to try (a smaller tier, no pin): a hint names the best if it starts sooner. */
  alternatives?: Record<string, { label: string; request: PlacementRequest }[]>;
}

export interface ClusterEta {
  clusterId: string;
  /** Share of the samples in which the session started here. */
  share: number;
  p50Ms: number;
  p90Ms: number;
}

export interface Eta {
  key: string;
  asOf: string;
  /** Milliseconds from asOf; Infinity: cannot start while `reason` holds. */
  p10Ms: number;
  p50Ms: number;
  p90Ms: number;
  perCluster: ClusterEta[];
  /** simulation: forward simulation of placement; throughput: depth ÷ recent admission rate; never: ∞. */
  method: "simulation" | "throughput" | "never";
  /** Placement's reason for the wait now (NoCapacity, PinnedClusterFull, NoMatchingGpuModel, …). */
  reason: string;
  /** "starts in about 25 min (10–60 min)" or "cannot start while <reason>". */
  message: string;
  /** A shape that would start sooner, e.g. "a 1 × L4 tier would likely start in 5 min instead of 40 min". */
  hint?: { label: string; p50Ms: number; message: string };
}
export type EstimateQueueFn = (input: EtaInput) => Eta[];
