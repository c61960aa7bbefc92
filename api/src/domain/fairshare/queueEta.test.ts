// The other shapes the queue ETA tries for a waiting session (alternativesFor): pure, no database.
import type { PlacementRequest } from "@berth/controllers";
import { type Offering, OfferingKind, ResourcePolicyKind } from "@berth/crds";
import { describe, expect, it } from "vitest";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import { alternativesFor } from "./queueEta.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";
const L4 = "NVIDIA-L4";
const offering = (name: string, gpuModel: string, slicesPerCard?: number): Offering =>
  OfferingKind.build({ name }, {
    displayName: name,
    gpuModel,
    gpuCount: 1,
    gpuMemoryMib: 81_920,
    tier: "standard",
    hourlyCreditRate: "1000",
    ...(slicesPerCard ? { slicesPerCard } : {}),
  } as Offering["spec"]) as Offering;
const row = {
  id: "ses_1",
  offering: "h100",
  gpu_model: H100,
  gpu_count: 1,
  gpu_slices_per_card: null,
  organization_id: "org_a",
  project_id: null,
  owner_id: "usr_a",
  cluster_pin: "gpu-a",
} as unknown as SessionRow;
const request: PlacementRequest = {
  key: "ses_1",
  gpuModel: H100,
  gpuCount: 1,
  priority: 0,
  since: "2026-11-29T00:00:00.000Z",
  volumes: [],
  clusterPin: "gpu-a",
};
const offerings = [
  offering("h100", H100),
  offering("h100-half", H100, 2),
  offering("h100-quarter", H100, 4),
  offering("l4", L4),
  offering("a100", "NVIDIA-A100"),
];

describe("other shapes for the queue ETA's hint", () => {
  it("tries the session unpinned, smaller slices of its model and other models the fleet has, smallest first", () => {
    const alts = alternativesFor(row, request, offerings, [], new Set([H100, L4]));
    expect(alts.map((a) => a.label)).toEqual([
      "the same session on any cluster",
      "a 1/4 slice of NVIDIA-H100-80GB-HBM3 (offering h100-quarter)",
      "a 1/2 slice of NVIDIA-H100-80GB-HBM3 (offering h100-half)",
      "1 × NVIDIA-L4 (offering l4)",
    ]);
    expect(alts[0]?.request.clusterPin).toBeUndefined();
    expect(alts[2]?.request).toMatchObject({ gpuModel: H100, gpuCount: 1, slice: { memoryMib: 40_960, cores: 50 } });
    expect(alts[3]?.request).toMatchObject({ gpuModel: L4, gpuCount: 1, clusterPin: "gpu-a" });
  });

  it("leaves out offerings its scope may not use, and slices no smaller than what it asks", () => {
    const policy = ResourcePolicyKind.build(
      { name: "org-a" },
      { scope: { kind: "organization", id: "org_a" }, allowedOfferings: ["h100", "h100-half"] },
    );
    const half = { ...row, offering: "h100-half", gpu_slices_per_card: 2, cluster_pin: null } as SessionRow;
    const { clusterPin: _, ...unpinned } = request;
    expect(alternativesFor(half, unpinned, offerings, [policy as never], new Set([H100, L4]))).toEqual([]);
  });
});
