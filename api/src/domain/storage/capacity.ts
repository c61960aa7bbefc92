// What a pool can still take, from its reading in the contract's order (capacity rule 1): the storage
// driver's report (`csi`, written into Pool.status by the operators), else the stated figure (`manual`),
// else the storage node's system drive (`node_disk`, a stand-in). Pools are never added together (rule 2):
// a volume must fit one pool.
import type { CapacitySource, Pool } from "@berth/crds";

export interface PoolCapacity {
  source: CapacitySource;
  totalGb: number;
  /** What is left for new volumes. */
  availableGb: number;
  /** Gigabytes of the pool's live volumes (their sizes, not their use). */
  provisionedGb: number;
  observedAt: string | null;
}

/** null: nothing is known (no driver report, no stated figure): the pool is not gated. */
export function capacityOf(pool: Pool, provisionedGb: number): PoolCapacity | null {
  const reading = pool.status?.capacity;
  if (reading?.source === "csi") {
    return {
      source: "csi",
      totalGb: reading.totalGb,
      availableGb: Math.max(0, reading.availableGb ?? reading.totalGb - provisionedGb),
      provisionedGb,
      observedAt: reading.observedAt ?? null,
    };
  }
  const stated = pool.spec.manualCapacityGb;
  if (stated !== undefined) {
    return {
      source: "manual",
      totalGb: stated,
      availableGb: Math.max(0, stated - provisionedGb),
      provisionedGb,
      observedAt: null,
    };
  }
  if (reading) {
    return {
      source: reading.source,
      totalGb: reading.totalGb,
      availableGb: Math.max(0, reading.availableGb ?? reading.totalGb - provisionedGb),
      provisionedGb,
      observedAt: reading.observedAt ?? null,
    };
  }
  return null;
}
