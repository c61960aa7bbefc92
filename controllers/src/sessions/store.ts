// What the worker needs from Postgres, as an interface: the API package implements it with knex
// (`createWorkerStore`, api/src/worker/sessionStore.ts), tests may fake it. Nothing here writes a custom resource.
import type { InterimStatus, Session } from "@berth/crds";
import type { DecayedUsage, FairShareSettings, ShareTree } from "../fairshare/types.ts";
import type { InventoryNodeView } from "../placement/capacity.ts";
import type { NodePoolRef, PlacementPolicy } from "../placement/types.ts";
import type { StatusReport } from "./lifecycle.ts";

export interface ClusterRecord {
  id: string;
  /** Registered and not deregistered. */
  registered: boolean;
  /** Last call of its operator (any report); null before the first. */
  lastReportAt: Date | null;
}

export interface StoredReport extends StatusReport {
  clusterId: string;
  sessionId: string;
}

export interface MirrorState {
  revision: number;
  restarts: number;
}

/** What a placement pass needs of fair share (docs/dev/fair-share.md). */
export interface FairShareView {
  tree: ShareTree;
  settings: Partial<FairShareSettings>;
  usage: DecayedUsage;
}

export interface SessionStore {
  clusters(): Promise<ClusterRecord[]>;
  inventory(): Promise<InventoryNodeView[]>;
  /** The newest report of each session from each cluster (all, or these sessions). */
  reports(sessionIds?: readonly string[]): Promise<StoredReport[]>;
  mirrorStates(sessionIds: readonly string[]): Promise<Map<string, MirrorState>>;
  /**
   * The phase each of these sessions' history rows holds (a new leader's start: a row behind its resource
   * is recorded again). Sessions without a row are left out.
   */
  recordedPhases(sessionIds: readonly string[]): Promise<Map<string, string>>;
  /** Takes the next mirror revision for a write of the mirror (and records its restart count). */
  nextMirrorRevision(sessionId: string, restarts?: number): Promise<number>;
  /**
   * Takes the next mirror revision of each of these sessions at once (a placement pass's, one round
   * trip): each gets its own, above every revision it had. Sessions unknown to the store are left out.
   */
  nextMirrorRevisions(sessionIds: readonly string[]): Promise<Map<string, number>>;
  /**
   * The session's status changed: follow it in the history row and tell the stream. Without `interim`,
   * the resource holds `after`'s status (written) and the row's interim status is cleared; with it,
   * `after`'s status is kept off the resource and this record is its only write (refused once another
   * worker has fenced this one off). Calls may be gathered into one write (one transaction for many
   * sessions); each resolves once its own transition is recorded, and a session's transitions are
   * recorded in the order of the calls.
   */
  recordTransition(before: Session, after: Session, interim?: InterimStatus): Promise<void>;
  /**
   * This worker leads from now on: interim records of every earlier leader are refused (a stale leader
   * must not place a session the new one sees as waiting). Called before `interimStatuses`.
   */
  fence(): Promise<void>;
  /** The interim statuses the history rows hold, by session id. */
  interimStatuses(): Promise<Map<string, InterimStatus>>;
  /** The resource was deleted after retention. */
  recordDeleted(session: Session): Promise<void>;
  /** Calls back with session ids whose report changed, and when the inventory changed. */
  listen(handlers: { reports(sessionIds: string[]): void; inventory(): void }): Promise<() => Promise<void>>;
  /** Housekeeping: drop stream events older than this. */
  purgeEvents(olderThan: Date): Promise<number>;
  /**
   * History rows still Pending that were made between `since` and `before`: with no resource, their create
   * died between the row and the resource (the API killed), and nothing else would ever end them.
   */
  pendingRows(since: Date, before: Date): Promise<{ id: string; namespace: string; name: string }[]>;
  /** Ends such a row as Failed (only while it is still Pending) and tells the stream; true when it did. */
  failUnmadeCreate(id: string, message: string, at: Date): Promise<boolean>;
  /**
   * The placement policy administrators chose (system settings), read at every pass; undefined, absent
   * or failing: the controller's configured policy.
   */
  placementPolicy?(): Promise<PlacementPolicy | undefined>;
  /**
   * Every node pool with its grants (docs/dev/node-pools.md), read with the inventory: a session's pod is
   * kept off the nodes of the pools of its cluster not granted to it. Absent: no pools.
   */
  nodePools?(): Promise<NodePoolRef[]>;
  /**
   * Fair share's share tree, settings and decayed usage, read at a pass that has requests: the queue
   * is then ordered by planFairPass and a borrowed session is placed only within the lending limits.
   * Undefined or absent: fair share is off (priority, then age, guaranteed before borrowed).
   */
  fairShare?(now: Date): Promise<FairShareView | undefined>;
}
