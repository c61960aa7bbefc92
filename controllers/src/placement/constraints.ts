// The placement rules, as a list: each one only removes clusters. Adding a rule (storage pools,
// organization-specific clusters, …) is adding an entry to DEFAULT_CONSTRAINTS, not editing the plan.
import type { Constraint, NodePoolRef, PlacementRequest, Tenancy } from "./types.ts";

/** A pinned session goes to its cluster and nowhere else; it waits there when the cluster is full. */
export const clusterPin: Constraint = {
  name: "cluster-pin",
  exclude: (req, cluster) =>
    req.clusterPin !== undefined && req.clusterPin !== cluster.clusterId
      ? { reason: "PinnedClusterFull", message: `the session is pinned to ${req.clusterPin}` }
      : undefined,
  decisiveReason: (req) => (req.clusterPin !== undefined ? "PinnedCluster" : undefined),
};

/**
 * A session stays on the cluster that holds its volumes' claims (the claims cannot move; the pool is
 * shared but a claim is a cluster's object). Volumes without a claim yet impose nothing. Two volumes
 * bound to two different clusters exclude every cluster: such a session waits with this reason.
 * An explicit pin to another cluster is refused earlier, at the API (409 volume_on_another_cluster).
 */
export const volumeLocality: Constraint = {
  name: "volume-locality",
  exclude: (req, cluster) => {
    const elsewhere = req.volumes.find((v) => v.boundCluster !== undefined && v.boundCluster !== cluster.clusterId);
    return elsewhere
      ? { reason: "VolumeLocality", message: `volume ${elsewhere.name} has its claim on ${elsewhere.boundCluster}` }
      : undefined;
  },
  decisiveReason: (req) => (req.volumes.some((v) => v.boundCluster !== undefined) ? "VolumeLocality" : undefined),
};

/**
 * A volume on a pool shared with `selected` clusters is mounted only there: its sessions go to those
 * clusters (a pin outside them is refused at the API). A volume whose pool is gone imposes nothing.
 */
export const poolSharing: Constraint = {
  name: "pool-sharing",
  exclude: (req, cluster) => {
    const outside = req.volumes.find(
      (v) => v.allowedClusters !== undefined && !v.allowedClusters.includes(cluster.clusterId),
    );
    return outside
      ? {
          reason: "VolumeLocality",
          message: `volume ${outside.name} is on a pool shared only with ${outside.allowedClusters?.join(", ")}`,
        }
      : undefined;
  },
  decisiveReason: (req) => (req.volumes.some((v) => v.allowedClusters?.length === 1) ? "VolumeLocality" : undefined),
};

/** Only clusters that accept sessions right now (registered, accepted, operator reporting). */
export const clusterPlaceable: Constraint = {
  name: "cluster-placeable",
  exclude: (_req, cluster) =>
    cluster.placeable
      ? undefined
      : { reason: "ClusterNotReady", message: `cluster ${cluster.clusterId} is not accepting sessions` },
};

/** Only clusters that have the GPU model at all, on a node big enough for the session. */
export const gpuModel: Constraint = {
  name: "gpu-model",
  exclude: (req, cluster) => {
    const m = cluster.models[req.gpuModel];
    // A MIG instance needs no whole GPU: the constraint migProfile counts its profile.
    if (m && req.migProfile) return undefined;
    if (!m || m.total === 0)
      return { reason: "NoMatchingGpuModel", message: `cluster ${cluster.clusterId} has no ${req.gpuModel}` };
    if (m.largestNode < req.gpuCount) {
      return {
        reason: "NoMatchingGpuModel",
        message: `no node of ${cluster.clusterId} has ${req.gpuCount} × ${req.gpuModel}`,
      };
    }
    return undefined;
  },
};

/** A slice of a card goes only where a sharing layer can isolate it (docs/dev/gpu-sharing.md). */
export const gpuSharing: Constraint = {
  name: "gpu-sharing",
  exclude: (req, cluster) =>
    req.slice && !cluster.models[req.gpuModel]?.sharing
      ? {
          reason: "NoSharingLayer",
          message: `cluster ${cluster.clusterId} runs no GPU sharing layer for ${req.gpuModel}: a slice of a card cannot go there`,
        }
      : undefined,
};

/**
 * A MIG instance goes only to a cluster with nodes marked with a layout of its profile that advertise it
 * (docs/dev/gpu-sharing.md); a session that is not MIG never counts MIG instances.
 */
export const migProfile: Constraint = {
  name: "mig-profile",
  exclude: (req, cluster) =>
    req.migProfile && !cluster.models[req.gpuModel]?.mig?.[req.migProfile]?.total
      ? {
          reason: "NoMigProfile",
          message: `no ${req.gpuModel} node of ${cluster.clusterId} is partitioned with MIG profile ${req.migProfile}`,
        }
      : undefined,
};

/** A cluster where the session's pod just found no node is skipped for a while (unless pinned there). */
export const avoidedClusters: Constraint = {
  name: "avoided-clusters",
  exclude: (req, cluster) =>
    req.clusterPin === undefined && req.avoidClusters?.includes(cluster.clusterId)
      ? { reason: "Unschedulable", message: `the session's pod found no node on ${cluster.clusterId} a moment ago` }
      : undefined,
};

/**
 * Whether a session of this owner, organization and project may use a node in these pools: every pool the
 * node is in must grant one of them (a node in two pools is for those granted both: the safe reading of an
 * overlap). A session whose tenancy is unknown may use only nodes in no pool.
 */
export function mayUseNode(tenancy: Tenancy | undefined, pools: readonly NodePoolRef[] | undefined): boolean {
  if (!pools || pools.length === 0) return true;
  if (!tenancy) return false;
  const mine = [`organization:${tenancy.organization}`];
  if (tenancy.project) mine.push(`project:${tenancy.project}`);
  if (tenancy.user) mine.push(`user:${tenancy.user}`);
  return pools.every((p) => mine.some((g) => p.grantees.includes(g)));
}

/**
 * Node pools with grants (docs/dev/node-pools.md): a cluster counts only the nodes the session may use. It
 * is excluded when none of them has the model in the size asked, or (whole GPUs) none has room; card-level
 * clusters are left to the card pool, which skips the nodes the session may not use.
 */
export const nodePoolGrants: Constraint = {
  name: "node-pool-grants",
  exclude: (req: PlacementRequest, cluster) => {
    // MIG instances are kept off pools' nodes by the pod's node affinity (avoidNodeLabels) alone.
    if (!cluster.nodeGroups || req.migProfile) return undefined;
    let total = 0;
    let free = 0;
    let largest = 0;
    for (const g of cluster.nodeGroups) {
      const m = g.models[req.gpuModel];
      if (!m || !mayUseNode(req.tenancy, g.pools)) continue;
      total += m.total;
      free += m.free;
      largest = Math.max(largest, m.largestNode);
    }
    if (total === 0 || largest < req.gpuCount)
      return {
        reason: "NodePoolReserved",
        message: `the ${req.gpuModel} nodes of ${cluster.clusterId} that fit are in node pools not granted to this session's organization or project`,
      };
    if (!cluster.models[req.gpuModel]?.sharing && free < req.gpuCount)
      return {
        reason: "NoCapacity",
        message: `no room for ${req.gpuCount} × ${req.gpuModel} on the nodes of ${cluster.clusterId} this session may use (the others are in node pools granted to others)`,
      };
    return undefined;
  },
};

export const DEFAULT_CONSTRAINTS: readonly Constraint[] = [
  clusterPin,
  volumeLocality,
  poolSharing,
  clusterPlaceable,
  gpuModel,
  gpuSharing,
  migProfile,
  nodePoolGrants,
  avoidedClusters,
];
