import { describe, expect, it } from "vitest";
import { computeCapacity, type InventoryNodeView } from "./capacity.ts";
import { planPlacement } from "./plan.ts";
import type { PlacementRequest } from "./types.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";

let clock = 0;
function aRequest(name: string, over: Partial<PlacementRequest> = {}): PlacementRequest {
  clock += 1;
  return {
    key: `org-a/${name}`,
    gpuModel: H100,
    gpuCount: 1,
    priority: 0,
    since: new Date(Date.UTC(2026, 10, 29, 4, 0, clock)).toISOString(),
    volumes: [],
    ...over,
  };
}

function aNode(clusterId: string, name: string, over: Partial<InventoryNodeView> = {}): InventoryNodeView {
  return {
    clusterId,
    name,
    gpuModel: H100,
    gpuAllocatable: 0,
    gpuInUse: 0,
    schedulable: true,
    ready: true,
    ...over,
  };
}

const clusters = [
  { clusterId: "a", placeable: true },
  { clusterId: "b", placeable: true },
];

describe("placing MIG instances", () => {
  it("goes only to a cluster whose marked nodes advertise the profile, and never counts a whole GPU", () => {
    const capacity = computeCapacity(
      clusters,
      [
        aNode("a", "whole", { gpuAllocatable: 8 }),
        aNode("b", "mig", {
          mig: { "3g.40gb": { allocatable: 2, inUse: 0 }, "1g.10gb": { allocatable: 2, inUse: 0 } },
        }),
      ],
      [],
    );
    const plan = planPlacement({
      requests: [aRequest("m1", { migProfile: "3g.40gb" }), aRequest("w1")],
      clusters: capacity,
      policy: "binpack",
    });
    expect(plan.placed.map((p) => [p.key, p.clusterId])).toEqual([
      ["org-a/m1", "b"],
      ["org-a/w1", "a"],
    ]);
    expect(capacity.find((c) => c.clusterId === "a")?.models[H100]?.free).toBe(8);
  });

  it("counts instances held by pods or by Berth's sessions, the larger, and queues the rest per profile", () => {
    const capacity = computeCapacity(
      clusters,
      [
        aNode("b", "mig", {
          mig: { "3g.40gb": { allocatable: 2, inUse: 1 }, "1g.10gb": { allocatable: 2, inUse: 0 } },
        }),
      ],
      [{ clusterId: "b", gpuModel: H100, gpuCount: 1, migProfile: "3g.40gb" }],
    );
    const plan = planPlacement({
      requests: [
        aRequest("big1", { migProfile: "3g.40gb" }),
        aRequest("big2", { migProfile: "3g.40gb" }),
        aRequest("small", { migProfile: "1g.10gb" }),
      ],
      clusters: capacity,
      policy: "binpack",
    });
    expect(plan.placed.map((p) => p.key)).toEqual(["org-a/big1", "org-a/small"]);
    expect(plan.waiting).toEqual([expect.objectContaining({ key: "org-a/big2", reason: "NoCapacity" })]);
  });

  it("waits with NoMigProfile where no marked node advertises the profile", () => {
    const capacity = computeCapacity(
      clusters,
      [aNode("b", "mig", { mig: { "1g.10gb": { allocatable: 7, inUse: 0 } } })],
      [],
    );
    const plan = planPlacement({
      requests: [aRequest("m", { migProfile: "4g.40gb" })],
      clusters: capacity,
      policy: "binpack",
    });
    expect(plan.waiting).toEqual([expect.objectContaining({ reason: "NoMigProfile" })]);
  });
});
