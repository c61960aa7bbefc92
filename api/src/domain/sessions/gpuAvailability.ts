// Free and total GPUs by cluster and model, from the operators' inventory (Postgres) and what Berth's
// own sessions hold (a fresh placement is counted before the inventory shows its pod).

import { CardPool, type InventoryNodeView, mayUseNode } from "@berth/controllers";
import { fractionLabel, SLICES_PER_CARD, sliceOf } from "@berth/crds";
import { cardHoldings } from "../../db/operations/sessions/cardHoldings.ts";
import { inventoryByClusterModel } from "../../db/operations/sessions/fleetModels.ts";
import { gpuHoldings } from "../../db/operations/sessions/gpuHoldings.ts";
import { placementInventory } from "../../db/operations/sessions/workerQueries.ts";
import type { Deps } from "../../deps.ts";
import type { Principal } from "../identity/principal.ts";
import { migHoldings, migRoom } from "../mig/offered.ts";

export interface Availability {
  clusters: {
    clusterId: string;
    clusterName: string;
    gpuModel: string;
    total: number;
    inUse: number;
    free: number;
    nodes: number;
    largestNode: number;
    /** Its nodes run a GPU sharing layer: cards take slices. */
    sharing: boolean;
    /** Whole cards nothing holds (with sharing: no slice either). */
    wholeFree: number;
    /** Slices of each offered fraction that still fit, card by card (with sharing); empty otherwise. */
    slicesFree: Record<string, number>;
    /** MIG instances free per profile, on nodes marked with a layout that advertise them; empty without. */
    migFree: Record<string, number>;
  }[];
  models: { gpuModel: string; total: number; free: number; queued: number }[];
}

/**
 * Node pools (docs/dev/node-pools.md): with `principal`, only nodes one of its organizations or projects
 * may use count, so the wizard offers what the caller can get. Without: the whole fleet.
 */
export async function gpuAvailability(deps: Deps, principal?: Principal): Promise<Availability> {
  const [allInv, held, queued, allNodes, cards, mig, migHeld] = await Promise.all([
    inventoryByClusterModel(deps.db),
    gpuHoldings(deps.db),
    deps
      .db("sessions")
      .where({ phase: "Queued" })
      .groupBy("gpu_model")
      .select("gpu_model", deps.db.raw("count(*)::int as n")) as Promise<{ gpu_model: string; n: number }[]>,
    placementInventory(deps.db),
    cardHoldings(deps.db),
    migRoom(deps.db),
    migHoldings(deps.db),
  ]);
  const { inv, nodes } = principal ? usableBy(principal, allInv, allNodes) : { inv: allInv, nodes: allNodes };
  // Card by card where a sharing layer runs: the placement's own pool, so both count alike.
  const pool = new CardPool(
    nodes,
    cards.map((h) => ({
      clusterId: h.cluster_id,
      node: h.node ?? "",
      cards: h.gpu_cards,
      ...(h.gpu_slices_per_card && h.gpu_slice_memory_mib
        ? {
            slice: {
              memoryMib: h.gpu_slice_memory_mib,
              cores: Math.floor(100 / h.gpu_slices_per_card),
            },
          }
        : {}),
    })),
  );
  const cardMemory = new Map<string, number>();
  for (const n of nodes)
    for (const c of n.cards ?? []) {
      const k = `${n.clusterId}/${n.gpuModel}`;
      cardMemory.set(k, Math.max(cardMemory.get(k) ?? 0, c.memoryMib));
    }
  const clusters = inv.map((r) => {
    const ours = held.find((h) => h.cluster_id === r.cluster_id && h.gpu_model === r.gpu_model)?.gpus ?? 0;
    const sharing = pool.shares(r.cluster_id, r.gpu_model);
    const wholeFree = sharing ? pool.wholeFree(r.cluster_id, r.gpu_model) : undefined;
    const inUse =
      wholeFree !== undefined ? r.allocatable - wholeFree : Math.min(r.allocatable, Math.max(r.in_use, ours));
    const memory = cardMemory.get(`${r.cluster_id}/${r.gpu_model}`) ?? 0;
    const slicesFree: Record<string, number> = {};
    if (sharing && memory > 0)
      for (const n of SLICES_PER_CARD) {
        const s = sliceOf(memory, n);
        slicesFree[fractionLabel(n)] = pool.slicesFree(r.cluster_id, r.gpu_model, s);
      }
    // MIG: the inventory's held instances or Berth's, the larger (as whole GPUs count).
    const migFree: Record<string, number> = {};
    for (const m of mig) {
      if (m.clusterId !== r.cluster_id || m.gpuModel !== r.gpu_model) continue;
      const ours =
        migHeld.find(
          (h) => h.cluster_id === m.clusterId && h.gpu_model === m.gpuModel && h.gpu_mig_profile === m.profile,
        )?.n ?? 0;
      migFree[m.profile] = Math.max(0, m.allocatable - Math.max(m.inUse, ours));
    }
    return {
      clusterId: r.cluster_id,
      clusterName: r.cluster_name,
      gpuModel: r.gpu_model,
      total: r.allocatable,
      inUse,
      free: r.allocatable - inUse,
      nodes: r.nodes,
      largestNode: r.largest_node,
      sharing,
      wholeFree: r.allocatable - inUse,
      slicesFree,
      migFree,
    };
  });
  const models = new Map<string, { gpuModel: string; total: number; free: number; queued: number }>();
  for (const c of clusters) {
    const m = models.get(c.gpuModel) ?? { gpuModel: c.gpuModel, total: 0, free: 0, queued: 0 };
    m.total += c.total;
    m.free += c.free;
    models.set(c.gpuModel, m);
  }
  for (const q of queued) {
    const m = models.get(q.gpu_model) ?? { gpuModel: q.gpu_model, total: 0, free: 0, queued: 0 };
    m.queued = q.n;
    models.set(q.gpu_model, m);
  }
  return { clusters, models: [...models.values()].sort((a, b) => a.gpuModel.localeCompare(b.gpuModel)) };
}

/**
 * The inventory less the nodes of pools granted to none of the caller's organizations and projects, nor to
 * the caller (whose grant counts in each of their organizations, and in none once they belong to none).
 */
function usableBy(
  p: Principal,
  inv: Awaited<ReturnType<typeof inventoryByClusterModel>>,
  nodes: InventoryNodeView[],
): { inv: typeof inv; nodes: InventoryNodeView[] } {
  if (!nodes.some((n) => n.pools)) return { inv, nodes };
  const tenancies = p.memberships.map((m) => ({
    organization: m.organizationId,
    ...(m.projectId ? { project: m.projectId } : {}),
    user: p.userId,
  }));
  const usable = (n: InventoryNodeView) => !n.pools || tenancies.some((t) => mayUseNode(t, n.pools));
  const kept = nodes.filter(usable);
  const rows = inv.flatMap((r) => {
    const mine = kept.filter(
      (n) => n.clusterId === r.cluster_id && n.gpuModel === r.gpu_model && n.ready && n.schedulable,
    );
    const denied = nodes.filter(
      (n) => n.clusterId === r.cluster_id && n.gpuModel === r.gpu_model && n.ready && n.schedulable && !usable(n),
    );
    if (denied.length === 0) return [r];
    if (mine.length === 0) return [];
    const sum = (f: (n: InventoryNodeView) => number) => mine.reduce((a, n) => a + f(n), 0);
    const allocatable = sum((n) => n.gpuAllocatable);
    return [
      {
        ...r,
        total: Math.max(0, r.total - (r.allocatable - allocatable)),
        allocatable,
        in_use: sum((n) => n.gpuInUse),
        nodes: mine.length,
        largest_node: Math.max(...mine.map((n) => n.gpuAllocatable)),
      },
    ];
  });
  return { inv: rows, nodes: kept };
}
