// Condition reasons and Kubernetes Event reasons the session controllers use beyond the ones the
// resource model lists (crds SessionReason). Constants, CamelCase, stable: clients may match on them.
import { SessionReason } from "@berth/crds";

export const Reason = {
  ...SessionReason,
  /** Scheduled=False: a constraint keeps the session off every cluster that has room. */
  ClusterNotReady: "ClusterNotReady",
  /** Ready=Unknown: the session's cluster stopped reporting for longer than the grace period. */
  ClusterNotReporting: "ClusterNotReporting",
  /** The session's cluster was deregistered under it. */
  ClusterGone: "ClusterGone",
  /** The pod found no node with room in its cluster for too long; the session is placed again. */
  Unschedulable: "Unschedulable",
  /** Queued: waiting to be placed (first pass). */
  Waiting: "Waiting",
  Pausing: "Pausing",
  Resumed: "Resumed",
  Started: "Started",
  Terminating: "Terminating",
  Terminated: "Terminated",
  Deleted: "Deleted",
  /** The mirror disappeared from the cluster although the session should run: it is written again. */
  MirrorLost: "MirrorLost",
} as const;
export type Reason = (typeof Reason)[keyof typeof Reason];
