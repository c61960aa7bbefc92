import { describe, expect, it } from "vitest";
import {
  type AvailabilityRow,
  clustersForModel,
  freeForModel,
  IdempotencyKeys,
  imageTag,
  offeredNow,
  roomForOffering,
  sortImages,
  tierLabel,
} from "./wizard.ts";

const rows = [
  { cluster_id: "clu_a", cluster_name: "alpha", gpu_model: "H100", total: 8, in_use: 8, free: 0, largest_node: 8 },
  { cluster_id: "clu_b", cluster_name: "beta", gpu_model: "H100", total: 16, in_use: 4, free: 12, largest_node: 8 },
  { cluster_id: "clu_b", cluster_name: "beta", gpu_model: "A10", total: 4, in_use: 0, free: 4, largest_node: 4 },
];

describe("the create wizard", () => {
  it("shows free GPUs of the offering's model per cluster, most free first", () => {
    expect(clustersForModel(rows, "H100", 1)).toEqual([
      { id: "clu_b", name: "beta", free: 12, total: 16, fits: true },
      { id: "clu_a", name: "alpha", free: 0, total: 8, fits: false },
    ]);
    expect(freeForModel(rows, "H100")).toEqual({ free: 12, total: 24 });
    expect(freeForModel(rows, "B200")).toEqual({ free: 0, total: 0 });
  });

  it("tags private images as the member's own and lists them first", () => {
    const images = [
      { name: "pytorch", visibility: "public" as const, owner: null },
      { name: "theirs", visibility: "private" as const, owner: "usr_2" },
      { name: "mine", visibility: "private" as const, owner: "usr_1" },
    ];
    expect(sortImages(images, "usr_1").map((i) => [i.name, imageTag(i, "usr_1")])).toEqual([
      ["mine", "yours"],
      ["pytorch", undefined],
      ["theirs", "private"],
    ]);
  });

  it("keeps one Idempotency-Key per distinct request", () => {
    let n = 0;
    const keys = new IdempotencyKeys(() => `k${++n}`);
    expect(keys.for({ offering: "h100" })).toBe("k1");
    expect(keys.for({ offering: "h100" })).toBe("k1");
    expect(keys.for({ offering: "a10" })).toBe("k2");
  });
});

describe("fractional tiers in the wizard", () => {
  const H = "NVIDIA-H100-80GB-HBM3";
  const rows = [
    {
      cluster_id: "clu_a",
      cluster_name: "a",
      gpu_model: H,
      total: 2,
      in_use: 1,
      free: 1,
      largest_node: 2,
      sharing: true,
      whole_free: 1,
      slices_free: { "1/2": 3, "1/4": 7, "1/8": 15 },
    },
    { cluster_id: "clu_b", cluster_name: "b", gpu_model: H, total: 1, in_use: 0, free: 1, largest_node: 1 },
  ];
  const eighth = { gpu_count: 1, gpu_model: H, fraction: "1/8", slice_memory_mib: 10194 };

  it("names a slice by its fraction and the GPU memory it guarantees", () => {
    expect(tierLabel(eighth)).toBe(`1/8 of ${H} · 10.0 GiB GPU memory`);
    expect(tierLabel({ gpu_count: 2, gpu_model: H, fraction: "1" })).toBe(`2 × ${H}`);
  });

  it("counts room for a slice in slices of its fraction, on clusters with a sharing layer only", () => {
    expect(roomForOffering(rows, eighth)).toEqual({ free: 15, total: 16, unit: "1/8 slices" });
    expect(roomForOffering(rows, { gpu_count: 1, gpu_model: H, fraction: "1" })).toMatchObject({
      free: 2,
      unit: "GPUs",
    });
    expect(clustersForModel(rows, H, 1, "1/8").map((c) => [c.id, c.free, c.fits])).toEqual([["clu_a", 15, true]]);
  });
});

describe("MIG offerings in the wizard", () => {
  const H = "NVIDIA-H100-80GB-HBM3";
  const rows: AvailabilityRow[] = [
    {
      cluster_id: "clu_a",
      cluster_name: "a",
      gpu_model: H,
      total: 1,
      in_use: 0,
      free: 1,
      largest_node: 1,
      mig_free: { "3g.40gb": 1, "1g.10gb": 4 },
    },
    {
      cluster_id: "clu_b",
      cluster_name: "b",
      gpu_model: H,
      total: 2,
      in_use: 0,
      free: 2,
      largest_node: 2,
      mig_free: {},
    },
  ];
  const half = { gpu_count: 1, gpu_model: H, mig_profile: "3g.40gb", card_share: "1/2" };

  it("names an instance by its profile and its share of the card", () => {
    expect(tierLabel(half)).toBe(`MIG 3g.40gb of ${H} · 1/2 of the card`);
  });

  it("offers a profile only where marked nodes advertise it, counting its free instances", () => {
    expect(offeredNow(rows, half)).toBe(true);
    expect(offeredNow(rows, { ...half, mig_profile: "4g.40gb" })).toBe(false);
    expect(offeredNow(rows, { gpu_count: 1, gpu_model: H })).toBe(true);
    expect(roomForOffering(rows, half)).toEqual({ free: 1, total: 0, unit: "MIG 3g.40gb instances" });
    expect(clustersForModel(rows, H, 1, "1", "3g.40gb").map((c) => [c.id, c.free, c.fits])).toEqual([
      ["clu_a", 1, true],
    ]);
  });
});
