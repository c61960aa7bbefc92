// Fair share of scarce GPUs: what the pure core reads and decides (docs/dev/fair-share.md). Plain data and
// pure functions only, so that the worker, the API (validation, queue ETA) and the benches call the same code.
//
// Units: GPU counts are "card equivalents": a whole card is 1, a slice of a card counts as the larger of
// its memory share and its cores share (cardEquivalents in shares.ts).
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
// Implemented in shares.ts, usage.ts, reclaim.ts and pass.ts; their types here are the contract (the queue
// ETA's, estimateQueue in eta.ts, is eta-types.ts).

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
