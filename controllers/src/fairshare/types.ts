// Fair share of scarce GPUs: what the pure core reads and decides (docs/dev/fair-share.md). Plain data and
// pure functions only, so that the worker, the API (validation, queue ETA) and the benches call the same code.
//
// Units: GPU counts are "card equivalents": a whole card is 1, a slice of a card counts as the larger of
// its memory share and its cores share (cardEquivalents in shares.ts).
import type { InventoryNodeView } from "../placement/capacity.ts";
import type { CardPool } from "../placement/cards.ts";
import type {
  ClusterCapacity,
  Constraint,
  Placed,
  PlacementPolicy,
  PlacementRequest,
  Waiting,
} from "../placement/types.ts";

// ---------------------------------------------------------------- the share tree (policy) ----------

/** One GPU model's quota of an organization or a project, in card equivalents. */
export interface ModelQuota {
  /** Always available to this org/project; others may borrow what of it is unused (up to lendingLimit). */
  guaranteed: number;
  /** The most it may use beyond `guaranteed` (borrowed). Absent: no limit but the fleet. 0: never borrows. */
  borrowingLimit?: number;
  /** The most of its unused guarantee others may borrow. Absent: all of it. Must be ≤ guaranteed. */
  lendingLimit?: number;
}

export interface ProjectShare {
  project: string;
  /** Relative to its sibling projects in the organization; > 0. Absent: 1. */
  weight?: number;
  /** Per GPU model; a project's guarantees are carved out of its organization's (their sum ≤ the org's). */
  quotas?: Record<string, ModelQuota>;
  /** Users' weights within the project (> 0); a user not named weighs 1. */
  userWeights?: Record<string, number>;
}

export interface OrgShare {
  org: string;
  /** Relative to the other organizations; > 0. Absent: 1. */
  weight?: number;
  quotas?: Record<string, ModelQuota>;
  projects?: ProjectShare[];
}

/**
 * The whole fleet's fair-share policy. A GPU model that no organization has a quota for is unmanaged:
 * every request of it is `guaranteed` and nothing of it is reclaimed (Berth's behaviour before fair share).
 */
export interface ShareTree {
  orgs: OrgShare[];
}

/** The knobs of ordering and reclaim (resource-policy fields on the wiring side). */
export interface FairShareSettings {
  /** Usage decays by half over this long. Default 7 days (Slurm's default half-life). > 0. */
  halfLifeMs: number;
  /** The most a heavy user's usage lowers its score. Default 1000. > 0. */
  maxUsagePenalty: number;
  /** Score points a request gains per minute it waits. Default 1. > 0. */
  agingPerMinute: number;
  /** The most waiting can add. Default 1440 (a day at one point a minute). Must exceed maxUsagePenalty. */
  agingCap: number;
  /** A borrowed session is never reclaimed this soon after its (re)start. Default 10 minutes. ≥ 0. */
  minRuntimeMs: number;
}

export const DEFAULT_FAIR_SHARE_SETTINGS: FairShareSettings = {
  halfLifeMs: 7 * 24 * 3_600_000,
  maxUsagePenalty: 1000,
  agingPerMinute: 1,
  agingCap: 1440,
  minRuntimeMs: 10 * 60_000,
};

// ---------------------------------------------------------------- bad input ------------------------

/** One problem with a share tree or settings; `field` is a path into the input (`orgs[1].quotas.L4.lendingLimit`). */
export interface FairShareIssue {
  field: string;
  message: string;
}

/**
 * Refused input. `code` is the contract's `validation_failed`; the API maps it to 400 with `field` (the
 * first issue) and all `issues`.
 */
export class FairShareInvalid extends Error {
  readonly code = "validation_failed" as const;
  readonly field: string;
  readonly issues: readonly FairShareIssue[];
  constructor(issues: readonly FairShareIssue[]) {
    const first = issues[0] ?? { field: "", message: "invalid fair-share input" };
    super(issues.map((i) => `${i.field}: ${i.message}`).join("; "));
    this.name = "FairShareInvalid";
    this.field = first.field;
    this.issues = issues;
  }
}

/** Whether the guarantees fit the fleet, per GPU model, with the arithmetic for the message. */
export interface SatisfiabilityReport {
  ok: boolean;
  models: {
    gpuModel: string;
    /** Sum of the organizations' guarantees. */
    guaranteed: number;
    /** Allocatable card equivalents of the fleet (placeable clusters). */
    capacity: number;
    ok: boolean;
    /** e.g. "H100: org-a 32 + org-b 40 = 72 guaranteed > 64 in the fleet". */
    arithmetic: string;
  }[];
  /** One line per unsatisfiable model, joined: the 400's message. */
  message: string;
}

// ---------------------------------------------------------------- who holds what -------------------

/** Who a session belongs to: the three levels of the share tree. */
export interface Owner {
  org: string;
  project: string;
  user: string;
}

export type CapacityClass = "guaranteed" | "borrowed";

/** A session that holds GPUs now (Starting, Running, …, and one under a reclaim notice until it pauses). */
export interface Holder extends Owner {
  key: string;
  clusterId: string;
  gpuModel: string;
  /** Card equivalents (cardEquivalents of its request). */
  cards: number;
  capacityClass: CapacityClass;
  priority: number;
  /** Start of its current run (status.startedAt): the minimum runtime counts from here. */
  startedAt: string;
  /**
   * When it was created: "the newest" among runs that started in the same second (status times have
   * whole seconds) is the one created last.
   */
  createdAt?: string;
  /** No activity now (the idle rule's signals): reclaimed before any active one. */
  idle: boolean;
  /** Already warned and waiting out its grace period: its cards count as coming free, it is not chosen again. */
  reclaiming?: boolean;
}

/** What a request asks, for classification. */
export interface ClassRequest extends Owner {
  gpuModel: string;
  cards: number;
  /** The person opted in to borrowed capacity (interactive sessions default to false). */
  mayBorrow: boolean;
  /**
   * A class fixed before placement (the person's choice at creation): a `guaranteed` one is never admitted
   * as borrowed, a `borrowed` one never takes guaranteed room (it stays reclaimable). Absent: either.
   */
  capacityClass?: CapacityClass;
}

export type Classification =
  | { kind: "guaranteed"; message: string }
  | { kind: "borrowed"; message: string }
  | {
      kind: "refused";
      /**
       * OverGuarantee: over its guarantee and not opted in to borrowing (waits for its guarantee);
       * OverBorrowingLimit: borrowing this much would exceed the org's or project's borrowing limit;
       * NothingLendable: no unused guarantee (within lending limits) or unguaranteed room is left to borrow.
       */
      reason: "OverGuarantee" | "OverBorrowingLimit" | "NothingLendable";
      message: string;
    };

// ---------------------------------------------------------------- usage and ordering ---------------

/** A stretch of GPU use; `end` absent: still running at `now`. */
export interface UsageInterval extends Owner {
  cards: number;
  start: string;
  end?: string;
}

/** Decayed usage (card-hours, half-life weighted) per org, `org/project` and `org/project/user`. */
export interface DecayedUsage {
  orgs: Record<string, number>;
  projects: Record<string, number>;
  users: Record<string, number>;
}

/** A request waiting for a GPU, with its owner, its size in card equivalents and its opt-in to borrowing. */
export interface FairRequest extends PlacementRequest, Owner {
  /** cardEquivalents of gpuCount/slice. */
  cards: number;
  /** The person opted in to borrowed capacity (interactive sessions default to false). */
  mayBorrow: boolean;
  /** A class fixed before placement (ClassRequest.capacityClass). */
  capacityClass?: CapacityClass;
}

/** How a request's score was made (shown to administrators). */
export interface FairScore {
  key: string;
  /** Higher goes first, within the same priority. */
  score: number;
  /** 0..maxUsagePenalty, from the decayed usage against the weighted fair share, level by level. */
  usagePenalty: number;
  /** 0..agingCap. */
  aging: number;
  /** The request's owner's weighted fair share of the whole fleet (product of weight fractions). */
  fairShare: number;
  /** Its decayed usage as a fraction of all decayed usage (product of level fractions). */
  usageShare: number;
}

// ---------------------------------------------------------------- reclaim --------------------------

/** Reclaim is asked for one guaranteed request that waits for room that borrowed sessions hold. */
export interface ReclaimChoice {
  /** The guaranteed request that needs the room. */
  forKey: string;
  clusterId: string;
  /** Borrowed sessions to warn, pause after the grace period and re-queue ahead of new work. */
  victims: { key: string; cards: number; why: string }[];
}

export interface ReclaimInput {
  now: string;
  settings: FairShareSettings;
  tree: ShareTree;
  usage: DecayedUsage;
  /** A guaranteed request that waits, and the clusters placement could put it on (its constraints pass). */
  request: { key: string; gpuModel: string; cards: number; eligibleClusters: readonly string[] };
  /** Free card equivalents of its model per cluster, as placement sees them now. */
  free: Record<string, number>;
  holders: readonly Holder[];
}

// ---------------------------------------------------------------- queue ETA ------------------------

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

// ---------------------------------------------------------------- one placement pass ---------------

export interface FairPassInput {
  now: string;
  tree: ShareTree;
  settings?: Partial<FairShareSettings>;
  /** Every session that wants a GPU now. */
  requests: readonly FairRequest[];
  /** Every session that holds GPUs now. */
  holders: readonly Holder[];
  usage: DecayedUsage;
  clusters: readonly ClusterCapacity[];
  policy: PlacementPolicy;
  constraints?: readonly Constraint[];
  cards?: CardPool;
}

export interface FairPassPlan {
  placed: (Placed & { capacityClass: CapacityClass })[];
  /** Placement's waiting entries, and the refused ones (reason OverGuarantee, OverBorrowingLimit, NothingLendable). */
  waiting: Waiting[];
  classes: Record<string, Classification>;
  scores: FairScore[];
  /** Borrowed sessions to reclaim for guaranteed requests that still wait. */
  reclaims: ReclaimChoice[];
}

// ---------------------------------------------------------------- the functions --------------------
// Implemented in shares.ts, usage.ts, reclaim.ts, pass.ts and eta.ts; their types here are the contract.

/** A demand's size in card equivalents: gpuCount, or for a slice max(memory share, cores share) of its card. */
export type CardEquivalentsFn = (
  demand: { gpuCount: number; slice?: { memoryMib: number; cores: number } },
  card: { memoryMib: number },
) => number;
/** Every problem of a tree (weights ≤ 0, negative limits, lending above guarantee, projects above org). */
export type CheckShareTreeFn = (tree: ShareTree) => FairShareIssue[];
/** Settings with defaults filled in; throws FairShareInvalid naming the field. */
export type ResolveSettingsFn = (partial?: Partial<FairShareSettings>) => FairShareSettings;
/** Guarantees against the fleet's capacity per model (fleetCapacity of the clusters). */
export type CheckSatisfiableFn = (tree: ShareTree, capacity: Record<string, number>) => SatisfiabilityReport;
/** guaranteed / borrowed / refused for one request against what is held now. */
export type ClassifyFn = (
  tree: ShareTree,
  holders: readonly Holder[],
  request: ClassRequest,
  capacity: Record<string, number>,
) => Classification;
export type DecayedUsageFn = (intervals: readonly UsageInterval[], now: string, halfLifeMs: number) => DecayedUsage;
export type ScoreRequestsFn = (
  tree: ShareTree,
  usage: DecayedUsage,
  requests: readonly FairRequest[],
  now: string,
  settings: FairShareSettings,
) => FairScore[];
/** The borrowed sessions to reclaim for one request, or undefined when reclaiming cannot make room. */
export type ChooseReclaimFn = (input: ReclaimInput) => ReclaimChoice | undefined;
export type PlanFairPassFn = (input: FairPassInput) => FairPassPlan;
export type EstimateQueueFn = (input: EtaInput) => Eta[];
