// PUT /internal/v1/inventory: the operator's full snapshot of its cluster's GPU nodes becomes the
// stored inventory. Snapshots are levels, not events: a late, older one is ignored, never merged.
import { findClusterById } from "../db/operations/clusters/findClusterById.ts";
import { replaceClusterInventory } from "../db/operations/inventory/replaceClusterInventory.ts";
import type { InventoryNode } from "../db/operations/inventory/types.ts";
import type { Deps } from "../deps.ts";
import { Forbidden } from "../errors.ts";

export interface InventoryAnswer {
  accepted: number;
  removed: number;
  /** True when a newer snapshot was already applied and this one changed nothing. */
  stale?: boolean;
}

export async function applyInventory(
  deps: Deps,
  clusterId: string,
  observedAt: Date,
  nodes: InventoryNode[],
): Promise<InventoryAnswer> {
  return deps.db.transaction(async (tx) => {
    // The row lock orders concurrent snapshots of one cluster and excludes a concurrent deregistration.
    const row = await findClusterById(tx, clusterId, { forUpdate: true });
    if (!row || row.deregistered_at)
      throw new Forbidden(`cluster ${clusterId} is not registered`, { cluster_id: clusterId });
    if (row.inventory_observed_at && row.inventory_observed_at.getTime() > observedAt.getTime()) {
      return { accepted: 0, removed: 0, stale: true };
    }
    return replaceClusterInventory(tx, clusterId, observedAt, nodes);
  });
}
