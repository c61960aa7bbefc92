import { describe, expect, it } from "vitest";
import {
  claimFilesystemsOf,
  nodeDiskOf,
  nodesMountingVolumes,
  quantityGb,
  storageReportOf,
  volumeStatsByClass,
  volumeUsageOf,
  withVolumeStats,
} from "./reporter.ts";

describe("the volume-sync report", () => {
  it("reads quantities in whole GiB, rounded down", () => {
    expect(quantityGb("1000Gi")).toBe(1000);
    expect(quantityGb("2Ti")).toBe(2048);
    expect(quantityGb("1536Mi")).toBe(1);
    expect(quantityGb("500G")).toBe(465);
    expect(quantityGb("lots")).toBeUndefined();
    expect(quantityGb(undefined)).toBeUndefined();
  });

  it("takes each class's largest segment, never the sum, and skips what it cannot read", () => {
    const r = storageReportOf(
      "clu_a",
      [
        { storageClassName: "fast", capacity: "300Gi" },
        { storageClassName: "fast", capacity: "250Gi", maximumVolumeSize: "100Gi" },
        { storageClassName: "slow", capacity: "2Ti", maximumVolumeSize: "1Ti" },
        { storageClassName: "broken", capacity: "?" },
        { capacity: "1Gi" },
      ],
      new Date("2026-11-26T06:00:00Z"),
    );
    expect(r).toEqual({
      cluster_id: "clu_a",
      observed_at: "2026-11-26T06:00:00.000Z",
      classes: [
        { storage_class: "fast", available_gb: 300, via: "csi_capacity" },
        { storage_class: "slow", available_gb: 2048, maximum_volume_gb: 1024, via: "csi_capacity" },
      ],
    });
  });
});

describe("the storage node's system drive (node_disk)", () => {
  it("reads the labelled node's ephemeral storage, with the tick", () => {
    const r = storageReportOf("clu_a", [], new Date("2026-11-26T06:00:00Z"), {
      intervalMs: 30_000,
      nodes: [
        {
          metadata: { name: "storage-0" },
          status: { capacity: { "ephemeral-storage": "1Ti" }, allocatable: { "ephemeral-storage": "900Gi" } },
        },
      ],
    });
    expect(r).toMatchObject({
      interval_ms: 30_000,
      node_disk: { node: "storage-0", total_gb: 1024, available_gb: 900 },
    });
    expect(nodeDiskOf([{ metadata: { name: "x" }, status: {} }])).toBeUndefined();
  });
});

describe("the space used on session volumes (the kubelet's stats summary)", () => {
  it("asks only the nodes whose session pods mount a volume's claim", () => {
    expect(
      nodesMountingVolumes([
        {
          spec: {
            nodeName: "gpu-0",
            volumes: [{ persistentVolumeClaim: { claimName: "berth-vol-aaaaaaaaaaaaaaaaaaaa" } }],
          },
        },
        { spec: { nodeName: "gpu-1", volumes: [{ persistentVolumeClaim: { claimName: "someone-elses" } }] } },
        { spec: { nodeName: "gpu-2", volumes: [] } },
        { spec: { volumes: [{ persistentVolumeClaim: { claimName: "berth-vol-bbbbbbbbbbbbbbbbbbbb" } }] } },
      ]),
    ).toEqual(["gpu-0"]);
  });

  it("reads each volume claim's used bytes in whole GiB rounded up, and nothing else", () => {
    expect(
      volumeUsageOf("gpu-0", {
        pods: [
          {
            volume: [
              { usedBytes: 1.5 * 1024 ** 3, pvcRef: { name: "berth-vol-aaaaaaaaaaaaaaaaaaaa" } },
              { usedBytes: 0, pvcRef: { name: "berth-vol-bbbbbbbbbbbbbbbbbbbb" } },
              { usedBytes: 9 * 1024 ** 3, pvcRef: { name: "someone-elses" } },
              { usedBytes: 4096 },
            ],
          },
          { volume: [{ pvcRef: { name: "berth-vol-cccccccccccccccccccc" } }] },
        ],
      }),
    ).toEqual([
      { claim_name: "berth-vol-aaaaaaaaaaaaaaaaaaaa", used_gb: 2, node: "gpu-0" },
      { claim_name: "berth-vol-bbbbbbbbbbbbbbbbbbbb", used_gb: 0, node: "gpu-0" },
    ]);
    expect(volumeUsageOf("gpu-0", {})).toEqual([]);
  });
});

describe("the driver's volume stats, where it publishes no capacity objects", () => {
  const GiB = 1024 ** 3;
  const ns = "berth-sessions";
  it("reads each volume claim's filesystem in whole GiB rounded down, and skips what the driver does not state", () => {
    expect(
      claimFilesystemsOf({
        pods: [
          {
            volume: [
              {
                capacityBytes: 1000.7 * GiB,
                availableBytes: 600.2 * GiB,
                pvcRef: { name: "berth-vol-aaaaaaaaaaaaaaaaaaaa", namespace: ns },
              },
              { usedBytes: GiB, pvcRef: { name: "berth-vol-bbbbbbbbbbbbbbbbbbbb", namespace: ns } },
              { capacityBytes: 5 * GiB, availableBytes: GiB, pvcRef: { name: "someone-elses", namespace: ns } },
              {
                capacityBytes: 0,
                availableBytes: 0,
                pvcRef: { name: "berth-vol-cccccccccccccccccccc", namespace: ns },
              },
            ],
          },
        ],
      }),
    ).toEqual([{ claim: "berth-vol-aaaaaaaaaaaaaaaaaaaa", namespace: ns, totalGb: 1000, availableGb: 600 }]);
  });

  it("takes each class's largest filesystem, never the sum, and adds it only where no capacity object speaks", () => {
    const at = new Date("2026-11-26T08:00:00Z");
    const fs = [
      { claim: "berth-vol-a", namespace: ns, totalGb: 1000, availableGb: 600 },
      { claim: "berth-vol-b", namespace: ns, totalGb: 1000, availableGb: 590 },
      { claim: "berth-vol-c", namespace: ns, totalGb: 50, availableGb: 40 },
      { claim: "berth-vol-d", namespace: ns, totalGb: 70, availableGb: 10 },
    ];
    const classOf = (f: { claim: string }) =>
      ({ "berth-vol-a": "nfs", "berth-vol-b": "nfs", "berth-vol-c": "fast", "berth-vol-d": undefined })[f.claim];
    const stats = volumeStatsByClass(fs, classOf, at);
    expect(Object.fromEntries(stats)).toEqual({
      nfs: { totalGb: 1000, availableGb: 590, measuredAt: at },
      fast: { totalGb: 50, availableGb: 40, measuredAt: at },
    });
    const report = storageReportOf("clu_a", [{ storageClassName: "fast", capacity: "300Gi" }], at);
    expect(withVolumeStats(report, stats).classes).toEqual([
      { storage_class: "fast", available_gb: 300, via: "csi_capacity" },
      { storage_class: "nfs", available_gb: 590, total_gb: 1000, via: "volume_stats" },
    ]);
    // A figure kept from an earlier tick says when it was measured.
    const later = storageReportOf("clu_a", [], new Date("2026-11-26T08:05:00Z"));
    expect(withVolumeStats(later, stats).classes).toContainEqual({
      storage_class: "nfs",
      available_gb: 590,
      total_gb: 1000,
      via: "volume_stats",
      measured_at: at.toISOString(),
    });
  });
});
