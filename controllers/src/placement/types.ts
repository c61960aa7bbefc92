// What placement reads and decides. Everything here is plain data so that the plan is a pure function.

export type PlacementPolicy = "binpack" | "spread";
export const PLACEMENT_POLICIES: readonly PlacementPolicy[] = ["binpack", "spread"];

/** A session that wants a GPU: new (Pending), waiting (Queued), resuming, or put back after a node loss. */
export interface PlacementRequest {
  /** `namespace/name` of the Session resource; unique. */
  key: string;
  gpuModel: string;
  gpuCount: number;
  /** A slice of one card (docs/dev/gpu-sharing.md): it goes only where a sharing layer packs it onto a card. */
  slice?: { memoryMib: number; cores: number };
  /** A MIG instance of this profile (gpuCount 1): it goes only where nodes advertise the profile free. */
  migProfile?: string;
  priority: number;
  /** When it started waiting (status.queuedAt, else creation): ties in priority go to the older one. */
  since: string;
  clusterPin?: string;
  /** The session's volumes and, for those whose claim exists somewhere, that cluster. */
  volumes: {
    name: string;
    boundCluster?: string;
    /** The volume's pool is shared with these clusters only (sharing `selected`); absent: all. */
    allowedClusters?: string[];
  }[];
  /** Clusters this session should not go back to for now (its pod found no node there). */
  avoidClusters?: string[];
  /** Whose session it is: node pools (docs/dev/node-pools.md) admit only the organizations and projects granted. */
  tenancy?: Tenancy;
}

export interface Tenancy {
  organization: string;
  project?: string;
  /** The session's owner: a pool granted to that person is theirs in any of their organizations. */
  user?: string;
}

/**
 * A node pool as placement sees it: one label requirement puts a node in it (`key` in `values`), and only
 * sessions of its grantees (`organization:<id>`, `project:<id>`, `user:<id>`: the owner) may use its nodes.
 */
export interface NodePoolRef {
  id: string;
  clusterId: string;
  label: { key: string; values: readonly string[] };
  grantees: readonly string[];
}

/** One GPU model's room on one cluster. */
export interface ModelCapacity {
  /** Allocatable GPUs on schedulable, ready nodes. */
  total: number;
  /** What is left for new sessions. */
  free: number;
  /** The most GPUs one node offers: a session never spans nodes. */
  largestNode: number;
  /** Its nodes run a GPU sharing layer: placement goes card by card and may place slices. */
  sharing?: boolean;
  /** MIG instances per profile on nodes an administrator marked with a layout (docs/dev/gpu-sharing.md). */
  mig?: Record<string, { total: number; free: number }>;
}

export interface ClusterCapacity {
  clusterId: string;
  /** Registered, accepted, and its operator reporting: sessions may be placed here. */
  placeable: boolean;
  models: Record<string, ModelCapacity>;
  /**
   * Only when some node of the cluster is in a node pool: the room again, split by the set of pools the
   * nodes are in (`pools` empty: nodes in none, open to every session).
   */
  nodeGroups?: { pools: readonly NodePoolRef[]; models: Record<string, Omit<ModelCapacity, "sharing" | "mig">> }[];
}

/** Why a cluster cannot take a request, or undefined when it can (capacity aside). */
export interface Exclusion {
  /** A SessionReason-style constant, used when the exclusion is what keeps the session waiting. */
  reason: string;
  message: string;
}

/**
 * A placement rule. Constraints only filter: they never pick. `decisive` says whether the rule fixed the
 * cluster (pin, volume locality), which names the Scheduled condition's reason.
 */
export interface Constraint {
  name: string;
  exclude(request: PlacementRequest, cluster: ClusterCapacity): Exclusion | undefined;
  /** The reason to record when this rule narrowed the choice to one cluster (PinnedCluster, VolumeLocality). */
  decisiveReason?(request: PlacementRequest): string | undefined;
}

export interface Placed {
  key: string;
  clusterId: string;
  /** On a cluster with a sharing layer: the node and cards chosen; the pod is pinned to them. */
  assignment?: { node: string; cards: string[] };
  /** Placed, PinnedCluster or VolumeLocality. */
  reason: string;
  message: string;
}

export interface Waiting {
  key: string;
  /** 1-based, among the sessions waiting for the same GPU model. */
  position: number;
  /** NoCapacity, PinnedClusterFull, NoMatchingGpuModel, or a constraint's reason. */
  reason: string;
  message: string;
}

export interface PlacementPlan {
  placed: Placed[];
  waiting: Waiting[];
}
