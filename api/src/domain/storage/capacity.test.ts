import type { Pool } from "@berth/crds";
import type { StorageReport } from "@berth/crds/internal-plane";
import { describe, expect, it } from "vitest";
import { capacityOf } from "./capacity.ts";
import { crossesNearQuota, readingFor } from "./readings.ts";

const pool = (spec: Partial<Pool["spec"]> = {}, capacity?: NonNullable<Pool["status"]>["capacity"]): Pool =>
  ({
    metadata: { name: "p" },
    spec: { cluster: "clu_a", storageClass: "fast", sharing: "all", default: false, ...spec },
    ...(capacity ? { status: { capacity } } : {}),
  }) as Pool;
const now = new Date("2026-11-26T08:00:00Z");
const report = (o: Partial<StorageReport> = {}): StorageReport => ({
  cluster_id: "clu_a",
  observed_at: now.toISOString(),
  classes: [],
  ...o,
});

describe("a pool's capacity reading, in the contract's order", () => {
  it("csi first, then the pool's stated figure, then the fleet default, then the storage node's drive", () => {
    const at = now.toISOString();
    const csi = report({ classes: [{ storage_class: "fast", available_gb: 700, via: "csi_capacity" }] });
    const disk = report({ node_disk: { node: "storage-0", total_gb: 900, available_gb: 850 } });
    expect(readingFor(pool({ manualCapacityGb: 500 }), csi, at, 100)?.source).toBe("csi");
    expect(readingFor(pool({ manualCapacityGb: 500 }), disk, at, 100)).toMatchObject({ source: "manual", via: "pool" });
    expect(readingFor(pool(), disk, at, 100)).toMatchObject({ source: "manual", totalGb: 100, via: "fleet_default" });
    expect(readingFor(pool(), disk, at, null)).toMatchObject({
      source: "node_disk",
      totalGb: 900,
      availableGb: 850,
      via: "node:storage-0",
    });
    expect(readingFor(pool(), report(), at, null)).toBeNull();
  });

  it("reads the driver's volume stats as csi, saying so, with the filesystem's size and when it was measured", () => {
    const at = now.toISOString();
    const stats = report({
      classes: [
        {
          storage_class: "fast",
          available_gb: 590,
          total_gb: 1000,
          via: "volume_stats",
          measured_at: "2026-11-26T07:55:00Z",
        },
      ],
    });
    expect(readingFor(pool({ manualCapacityGb: 500 }), stats, at, 100)).toEqual({
      source: "csi",
      totalGb: 1000,
      availableGb: 590,
      observedAt: "2026-11-26T07:55:00.000Z",
      via: "volume_stats",
    });
  });

  it("marks an automatic reading stale after three of its cluster's ticks without a report", () => {
    const p = pool({}, { source: "csi", totalGb: 700, availableGb: 700, observedAt: "2026-11-26T07:00:00Z" });
    const fresh = { observedAt: new Date(now.getTime() - 60_000), intervalMs: 30_000 };
    const silent = { observedAt: new Date(now.getTime() - 91_000), intervalMs: 30_000 };
    expect(capacityOf(p, 100, { lastReport: fresh, now })).toMatchObject({ source: "csi", stale: false });
    expect(capacityOf(p, 100, { lastReport: silent, now })).toMatchObject({ source: "csi", stale: true });
    expect(capacityOf(p, 100, { now })).toMatchObject({ stale: true });
    // A stated figure is never stale.
    expect(capacityOf(pool({ manualCapacityGb: 10 }), 4, { now })).toMatchObject({
      source: "manual",
      availableGb: 6,
      stale: false,
    });
  });

  it("a node_disk reading yields to any stated figure, the fleet default included", () => {
    const p = pool({}, { source: "node_disk", totalGb: 900, availableGb: 850, via: "node:storage-0" });
    expect(capacityOf(p, 0, { fleetDefaultGb: 300, now })).toMatchObject({ source: "manual", totalGb: 300 });
    expect(capacityOf(p, 0, { now })).toMatchObject({ source: "node_disk", totalGb: 900 });
  });
});

describe("the near-full line of a volume", () => {
  it("rings when a measurement crosses 90 % upwards, not while it stays above or below", () => {
    expect(crossesNearQuota(undefined, 9, 10)).toBe(true);
    expect(crossesNearQuota(8, 9, 10)).toBe(true);
    expect(crossesNearQuota(9, 9.5, 10)).toBe(false);
    expect(crossesNearQuota(undefined, 8.9, 10)).toBe(false);
    expect(crossesNearQuota(9.5, 5, 10)).toBe(false);
  });
});
