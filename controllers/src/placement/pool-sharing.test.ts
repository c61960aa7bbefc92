import { describe, expect, it } from "vitest";
import { poolSharing } from "./constraints.ts";
import type { ClusterCapacity, PlacementRequest } from "./types.ts";

const req = (volumes: PlacementRequest["volumes"]): PlacementRequest =>
  ({
    key: "ns/ses-a",
    gpuModel: "H100",
    gpuCount: 1,
    priority: 0,
    since: "2026-11-26T06:00:00Z",
    volumes,
  }) as PlacementRequest;
const cluster = (clusterId: string) => ({ clusterId }) as unknown as ClusterCapacity;

describe("a volume on a pool shared with selected clusters", () => {
  it("excludes every other cluster, and names the pool's clusters", () => {
    const r = req([{ name: "vol-a", allowedClusters: ["clu_b"] }]);
    expect(poolSharing.exclude(r, cluster("clu_b"))).toBeUndefined();
    expect(poolSharing.exclude(r, cluster("clu_a"))).toMatchObject({ reason: "VolumeLocality" });
    expect(poolSharing.exclude(r, cluster("clu_a"))?.message).toContain("clu_b");
    expect(poolSharing.decisiveReason?.(r)).toBe("VolumeLocality");
  });

  it("imposes nothing for volumes on pools shared with all", () => {
    expect(poolSharing.exclude(req([{ name: "vol-a" }]), cluster("clu_a"))).toBeUndefined();
  });
});
