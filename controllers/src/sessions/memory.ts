// What the session controller remembers between reconciles, apart from what it observes (informers,
// Postgres): only what no observation can say (which revision a placement took, which history rows are
// still being written, what a mirror write or delete answered). Each entry yields to an observation that
// contradicts it (a report that the mirror is gone, a fresh placement), and a session's entries go when
// the informer says the session is gone.
import type { InterimStatus, Session } from "@berth/crds";
import type { MirrorState } from "./store.ts";

export interface MirrorSeen {
  cluster: string;
  state: "present" | "absent" | "deleting";
}

export class SessionMemory {
  /** The mirror revision and restart count the session's reports are read against. Session id → state. */
  readonly mirrorStates = new Map<string, MirrorState>();
  /**
   * Revisions a placement pass took (in one batch) for the mirrors its placements dispatch: the session's
   * next ensure writes its mirror at this revision instead of taking one more. Session id → revision.
   */
  readonly reserved = new Map<string, number>();
  /**
   * Sessions whose written status is not in their history row (recording it failed): the status before
   * the first such write. The informer has the new status already, so a retry sees no change: the next
   * reconcile or write records from this one instead.
   */
  readonly unrecorded = new Map<string, Session>();
  /**
   * Statuses kept off the resource (an interim phase, crds INTERIM_PHASES), as recorded in the history
   * row: each applies while the resource's status is the one it follows (Observed.effective).
   */
  readonly interim = new Map<string, InterimStatus>();
  /**
   * Sessions with a status write (to the resource or the row) in flight, and whether another write was
   * turned away meanwhile (then a placement pass runs once it is done: the turned-away may be one).
   */
  readonly writing = new Map<string, boolean>();
  /** What the last mirror write or delete on the session's cluster answered. */
  readonly mirrors = new Map<string, MirrorSeen>();
  /** Stray mirrors a DELETE found gone (404): session id → cluster → `at` of the report it answered. */
  readonly straysGone = new Map<string, Map<string, string>>();
  /** Since when the session's pod has been reported unschedulable. */
  readonly unschedulableSince = new Map<string, Date>();
  /** A cluster a session must not be placed straight back on, until (clock ms). Session id → cluster. */
  readonly avoid = new Map<string, { cluster: string; until: number }>();

  /** The session is gone for good (retention): nothing kept about it is of use. */
  forget(id: string): void {
    this.mirrorStates.delete(id);
    this.reserved.delete(id);
    this.unrecorded.delete(id);
    this.interim.delete(id);
    this.mirrors.delete(id);
    this.straysGone.delete(id);
    this.unschedulableSince.delete(id);
    this.avoid.delete(id);
  }
}
