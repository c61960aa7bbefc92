// The dashboard's storage tile by the contract's storage rules 2 and 3: several pools are never added
// together (a volume must fit one), so the tile shows the largest pool a placement could use; with a
// cluster selected, it still reads the pools fleet-wide (volumes are not tied to a cluster) and says so.
import type { Pool } from "@berth/crds";
import type { PoolCapacity } from "../storage/capacity.ts";

export interface StorageTile {
  status: "ok" | "no_pools" | "unavailable";
  /** The largest pool by what it can still take; null without pools. */
  pool: string | null;
  source: string | null;
  total_gb: number | null;
  available_gb: number | null;
  provisioned_gb: number | null;
  pools: number;
  shared_across_clusters: boolean;
}

export function storageTile(
  pools: { pool: Pool; capacity: PoolCapacity | null }[] | undefined,
  clusterId: string | undefined,
): StorageTile {
  const shared = clusterId !== undefined;
  const none = { pool: null, source: null, total_gb: null, available_gb: null, provisioned_gb: null } as const;
  if (!pools) return { status: "unavailable", ...none, pools: 0, shared_across_clusters: shared };
  if (pools.length === 0) return { status: "no_pools", ...none, pools: 0, shared_across_clusters: shared };
  const known = pools.filter((p) => p.capacity !== null) as { pool: Pool; capacity: PoolCapacity }[];
  const best = known.sort(
    (a, b) => b.capacity.availableGb - a.capacity.availableGb || b.capacity.totalGb - a.capacity.totalGb,
  )[0];
  return {
    status: "ok",
    pool: best?.pool.metadata.name ?? pools[0]?.pool.metadata.name ?? null,
    source: best?.capacity.source ?? null,
    total_gb: best?.capacity.totalGb ?? null,
    available_gb: best?.capacity.availableGb ?? null,
    provisioned_gb: best?.capacity.provisionedGb ?? null,
    pools: pools.length,
    shared_across_clusters: shared,
  };
}
