// The fleet's room, from the operators' inventory (Postgres) and the sessions that hold GPUs (Session
// resources). Pure, so that the counting rules are table-tested.
//
// Used GPUs per cluster and model = max(what the inventory says is in use, what Berth's own sessions
// hold there). Inventory lags a fresh placement by a report cycle, and Berth's count misses GPUs held by
// pods that are not Berth's; the larger of the two is never an over-commit by Berth itself.
import type { ClusterCapacity, NodePoolRef } from "./types.ts";

export interface InventoryNodeView {
  clusterId: string;
  name: string;
  gpuModel: string | null;
  gpuAllocatable: number;
  gpuInUse: number;
  schedulable: boolean;
  ready: boolean;
  /** The node's GPU sharing layer; its cards then carry what pods hold on each (docs/dev/gpu-sharing.md). */
  sharing?: "hami";
  cards?: CardView[];
  /** The node pools whose label the node carries (docs/dev/node-pools.md); absent or empty: none. */
  pools?: readonly NodePoolRef[];
  /**
   * MIG instances per profile the node advertises and its pods hold, only for the profiles of a layout an
   * administrator marked the node with (docs/dev/gpu-sharing.md); absent: none offered there.
   */
  mig?: Readonly<Record<string, { allocatable: number; inUse: number }>>;
}

/** One card of a node with a sharing layer, as the operator's inventory reports it. */
export interface CardView {
  uuid: string;
  memoryMib: number;
  /** Percent; 100 is the whole card. */
  cores: number;
  /** vGPUs the layer splits the card into: at most this many pods share it. */
  split: number;
  healthy: boolean;
  memoryUsedMib: number;
  coresUsed: number;
  vgpusUsed: number;
}

export interface ClusterView {
  clusterId: string;
  placeable: boolean;
}

/** A session that holds (or is about to hold) GPUs on a cluster. */
export interface Holding {
  clusterId: string;
  gpuModel: string;
  gpuCount: number;
  /** A MIG instance: it holds one of this profile, never a whole GPU. */
  migProfile?: string;
}

export function computeCapacity(
  clusters: readonly ClusterView[],
  nodes: readonly InventoryNodeView[],
  holdings: readonly Holding[],
): ClusterCapacity[] {
  return clusters.map((c) => {
    const models: ClusterCapacity["models"] = {};
    const used = new Map<string, number>();
    for (const n of nodes) {
      if (n.clusterId !== c.clusterId || !n.gpuModel || !n.schedulable || !n.ready) continue;
      models[n.gpuModel] ??= { total: 0, free: 0, largestNode: 0 };
      const m = models[n.gpuModel] as ClusterCapacity["models"][string];
      m.total += n.gpuAllocatable;
      m.largestNode = Math.max(m.largestNode, n.gpuAllocatable);
      if (n.sharing) m.sharing = true;
      used.set(n.gpuModel, (used.get(n.gpuModel) ?? 0) + n.gpuInUse);
      if (n.mig) {
        m.mig ??= {};
        for (const [profile, q] of Object.entries(n.mig)) {
          const p = m.mig[profile] ?? { total: 0, free: 0 };
          p.total += q.allocatable;
          m.mig[profile] = p;
          used.set(migKey(n.gpuModel, profile), (used.get(migKey(n.gpuModel, profile)) ?? 0) + q.inUse);
        }
      }
    }
    const held = new Map<string, number>();
    for (const h of holdings) {
      if (h.clusterId !== c.clusterId) continue;
      const k = h.migProfile ? migKey(h.gpuModel, h.migProfile) : h.gpuModel;
      held.set(k, (held.get(k) ?? 0) + h.gpuCount);
    }
    for (const [model, m] of Object.entries(models)) {
      m.free = Math.max(0, m.total - Math.max(used.get(model) ?? 0, held.get(model) ?? 0));
      for (const [profile, p] of Object.entries(m.mig ?? {})) {
        const k = migKey(model, profile);
        p.free = Math.max(0, p.total - Math.max(used.get(k) ?? 0, held.get(k) ?? 0));
      }
    }
    const nodeGroups = groupsByPools(c.clusterId, nodes);
    return { clusterId: c.clusterId, placeable: c.placeable, models, ...(nodeGroups ? { nodeGroups } : {}) };
  });
}

/**
 * The cluster's usable nodes split by the pools they are in, or undefined when none is in a pool (the
 * common case costs one scan and nothing else). A group's free room is what the inventory says its nodes
 * do not use: Berth's own fresh placements are counted cluster-wide only, so this can lag by a report.
 */
function groupsByPools(clusterId: string, nodes: readonly InventoryNodeView[]): ClusterCapacity["nodeGroups"] {
  let any = false;
  for (const n of nodes) if (n.clusterId === clusterId && n.pools && n.pools.length > 0) any = true;
  if (!any) return undefined;
  const groups = new Map<string, NonNullable<ClusterCapacity["nodeGroups"]>[number]>();
  for (const n of nodes) {
    if (n.clusterId !== clusterId || !n.gpuModel || !n.schedulable || !n.ready) continue;
    const pools = n.pools ?? [];
    const k = pools.map((p) => p.id).join(",");
    let g = groups.get(k);
    if (!g) {
      g = { pools, models: {} };
      groups.set(k, g);
    }
    g.models[n.gpuModel] ??= { total: 0, free: 0, largestNode: 0 };
    const m = g.models[n.gpuModel] as { total: number; free: number; largestNode: number };
    m.total += n.gpuAllocatable;
    m.free += Math.max(0, n.gpuAllocatable - n.gpuInUse);
    m.largestNode = Math.max(m.largestNode, n.gpuAllocatable);
  }
  return [...groups.values()];
}

/** A MIG profile's lane beside its model's whole GPUs: placement counts and queues it on its own. */
export function migKey(gpuModel: string, profile: string): string {
  return `${gpuModel}#mig-${profile}`;
}

/** GPU models the fleet offers (any registered cluster, any node), for `reported_models` in errors. */
export function reportedModels(nodes: readonly InventoryNodeView[]): string[] {
  return [...new Set(nodes.flatMap((n) => (n.gpuModel && n.gpuAllocatable > 0 ? [n.gpuModel] : [])))].sort();
}
