// What a pool can still take, from its reading in the contract's order (capacity rule 1): the storage
// driver's report (`csi`, written into Pool.status by the operators), else the stated figure (`manual`:
// the pool's own, then the fleet default), else the storage node's system drive (`node_disk`, a stand-in
// that can be far off). Pools are never added together (rule 2): a volume must fit one pool. An automatic
// reading (csi, node_disk) whose cluster has not reported for a few ticks is marked stale: the Pool is
// written only when a reading changes, so its age alone says nothing.
import type { CapacitySource, Pool } from "@berth/crds";

export interface PoolCapacity {
  source: CapacitySource;
  totalGb: number;
  /** What is left for new volumes. */
  availableGb: number;
  /** Gigabytes of the pool's live volumes (their sizes, not their use). */
  provisionedGb: number;
  observedAt: string | null;
  /** How it was read: csi_capacity; manual: pool or fleet_default; node_disk: node:<name>. */
  via: string | null;
  /** The reporting cluster has been silent for a few ticks: the figure may be out of date. */
  stale: boolean;
}

export interface CapacityContext {
  /** The fleet-default capacity (storage settings), for pools that state none. */
  fleetDefaultGb?: number | null | undefined;
  /** When the pool's cluster last reported, and its tick. */
  lastReport?: { observedAt: Date; intervalMs: number | null } | undefined;
  now?: Date | undefined;
}

/** A reading is stale after this many of its cluster's ticks without a report. */
export const STALE_AFTER_TICKS = 3;
const DEFAULT_TICK_MS = 30_000;

function staleness(ctx: CapacityContext): boolean {
  if (!ctx.lastReport || !ctx.now) return true;
  const tick = ctx.lastReport.intervalMs ?? DEFAULT_TICK_MS;
  return ctx.now.getTime() - ctx.lastReport.observedAt.getTime() > STALE_AFTER_TICKS * tick;
}

/** null: nothing is known (no driver report, no stated figure): the pool is not gated. */
export function capacityOf(pool: Pool, provisionedGb: number, ctx: CapacityContext = {}): PoolCapacity | null {
  const reading = pool.status?.capacity;
  const automatic = (r: NonNullable<typeof reading>): PoolCapacity => ({
    source: r.source,
    totalGb: r.totalGb,
    availableGb: Math.max(0, r.availableGb ?? r.totalGb - provisionedGb),
    provisionedGb,
    observedAt: r.observedAt ?? null,
    via: r.via ?? null,
    stale: ctx.now ? staleness(ctx) : false,
  });
  if (reading?.source === "csi") return automatic(reading);
  const stated = pool.spec.manualCapacityGb ?? ctx.fleetDefaultGb ?? undefined;
  if (stated !== undefined && stated !== null) {
    return {
      source: "manual",
      totalGb: stated,
      availableGb: Math.max(0, stated - provisionedGb),
      provisionedGb,
      observedAt: null,
      via: pool.spec.manualCapacityGb !== undefined ? "pool" : "fleet_default",
      stale: false,
    };
  }
  if (reading?.source === "node_disk") return automatic(reading);
  return null;
}
