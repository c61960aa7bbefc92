import { describe, expect, it } from "vitest";
import { computeCapacity, type InventoryNodeView, reportedModels } from "./capacity.ts";
import { DEFAULT_CONSTRAINTS } from "./constraints.ts";
import { planPlacement } from "./plan.ts";
import type { ClusterCapacity, Constraint, PlacementRequest } from "./types.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";
const L4 = "NVIDIA-L4";

let clock = 0;
function aRequest(name: string, over: Partial<PlacementRequest> = {}): PlacementRequest {
  clock += 1;
  return {
    key: `org-a/${name}`,
    gpuModel: H100,
    gpuCount: 1,
    priority: 0,
    since: new Date(Date.UTC(2026, 10, 22, 6, 0, clock)).toISOString(),
    volumes: [],
    ...over,
  };
}

function aCluster(
  id: string,
  models: Record<string, [free: number, total?: number, largest?: number]>,
  placeable = true,
): ClusterCapacity {
  return {
    clusterId: id,
    placeable,
    models: Object.fromEntries(
      Object.entries(models).map(([m, [free, total = free, largest = total]]) => [
        m,
        { free, total, largestNode: largest },
      ]),
    ),
  };
}

const where = (plan: ReturnType<typeof planPlacement>) =>
  Object.fromEntries(plan.placed.map((p) => [p.key.split("/")[1], p.clusterId]));
const queue = (plan: ReturnType<typeof planPlacement>) =>
  plan.waiting.map((w) => [w.key.split("/")[1], w.position, w.reason]);

describe("placement", () => {
  it("packs sessions onto the fullest cluster that fits under bin-pack", () => {
    const plan = planPlacement({
      requests: [aRequest("s1"), aRequest("s2")],
      clusters: [aCluster("clu_a", { [H100]: [6, 8] }), aCluster("clu_b", { [H100]: [2, 8] })],
      policy: "binpack",
    });
    expect(where(plan)).toEqual({ s1: "clu_b", s2: "clu_b" });
    expect(plan.placed[0]?.reason).toBe("Placed");
  });

  it("spreads sessions onto the emptiest cluster under spread", () => {
    const plan = planPlacement({
      requests: [aRequest("s1"), aRequest("s2"), aRequest("s3")],
      clusters: [aCluster("clu_a", { [H100]: [3] }), aCluster("clu_b", { [H100]: [2] })],
      policy: "spread",
    });
    expect(where(plan)).toEqual({ s1: "clu_a", s2: "clu_a", s3: "clu_b" });
  });

  it("sends a session only to clusters with its GPU model", () => {
    const plan = planPlacement({
      requests: [aRequest("s1", { gpuModel: L4 })],
      clusters: [aCluster("clu_a", { [H100]: [8] }), aCluster("clu_b", { [L4]: [1] })],
      policy: "binpack",
    });
    expect(where(plan)).toEqual({ s1: "clu_b" });
  });

  it("honours a pin even when another cluster has more room, and says so", () => {
    const plan = planPlacement({
      requests: [aRequest("s1", { clusterPin: "clu_a" })],
      clusters: [aCluster("clu_a", { [H100]: [1] }), aCluster("clu_b", { [H100]: [8] })],
      policy: "spread",
    });
    expect(where(plan)).toEqual({ s1: "clu_a" });
    expect(plan.placed[0]?.reason).toBe("PinnedCluster");
  });

  it("keeps a pinned session waiting on its full cluster while the other has room", () => {
    const plan = planPlacement({
      requests: [aRequest("s1", { clusterPin: "clu_a" })],
      clusters: [aCluster("clu_a", { [H100]: [0, 8] }), aCluster("clu_b", { [H100]: [8] })],
      policy: "binpack",
    });
    expect(plan.placed).toEqual([]);
    expect(queue(plan)).toEqual([["s1", 1, "PinnedClusterFull"]]);
  });

  it("keeps a session on the cluster that holds its volume's claim", () => {
    const plan = planPlacement({
      requests: [aRequest("s1", { volumes: [{ name: "home", boundCluster: "clu_b" }, { name: "scratch" }] })],
      clusters: [aCluster("clu_a", { [H100]: [8] }), aCluster("clu_b", { [H100]: [1] })],
      policy: "spread",
    });
    expect(where(plan)).toEqual({ s1: "clu_b" });
    expect(plan.placed[0]?.reason).toBe("VolumeLocality");
  });

  it("queues by priority, then age, with positions per GPU model", () => {
    const old = aRequest("old");
    const young = aRequest("young");
    const urgent = aRequest("urgent", { priority: 10 });
    const l4 = aRequest("l4", { gpuModel: L4 });
    const plan = planPlacement({
      requests: [young, old, l4, urgent],
      clusters: [aCluster("clu_a", { [H100]: [1, 8], [L4]: [0, 4] })],
      policy: "binpack",
    });
    expect(where(plan)).toEqual({ urgent: "clu_a" });
    expect(queue(plan)).toEqual([
      ["old", 1, "NoCapacity"],
      ["young", 2, "NoCapacity"],
      ["l4", 1, "NoCapacity"],
    ]);
  });

  it("does not let a small younger session overtake a big older one of the same model", () => {
    const plan = planPlacement({
      requests: [aRequest("big", { gpuCount: 4 }), aRequest("small")],
      clusters: [aCluster("clu_a", { [H100]: [2, 8] })],
      policy: "binpack",
    });
    expect(plan.placed).toEqual([]);
    expect(queue(plan)).toEqual([
      ["big", 1, "NoCapacity"],
      ["small", 2, "NoCapacity"],
    ]);
  });

  it("lets sessions that may go elsewhere pass a pinned session waiting on a full cluster", () => {
    const plan = planPlacement({
      requests: [aRequest("pinned", { clusterPin: "clu_a" }), aRequest("free")],
      clusters: [aCluster("clu_a", { [H100]: [0, 8] }), aCluster("clu_b", { [H100]: [1] })],
      policy: "binpack",
    });
    expect(where(plan)).toEqual({ free: "clu_b" });
    expect(queue(plan)).toEqual([["pinned", 1, "PinnedClusterFull"]]);
  });

  it("never places more GPUs than a cluster has free", () => {
    const requests = Array.from({ length: 20 }, (_, i) => aRequest(`s${i}`, { gpuCount: 1 + (i % 3) }));
    const plan = planPlacement({
      requests,
      clusters: [aCluster("clu_a", { [H100]: [7] }), aCluster("clu_b", { [H100]: [5] })],
      policy: "spread",
    });
    const sum = (c: string) =>
      plan.placed
        .filter((p) => p.clusterId === c)
        .reduce((n, p) => n + (requests.find((r) => r.key === p.key)?.gpuCount ?? 0), 0);
    expect(sum("clu_a")).toBeLessThanOrEqual(7);
    expect(sum("clu_b")).toBeLessThanOrEqual(5);
    expect(plan.placed.length + plan.waiting.length).toBe(20);
  });

  it("says the fleet has no such model, without blocking anyone", () => {
    const plan = planPlacement({
      requests: [aRequest("a100", { gpuModel: "NVIDIA-A100" }), aRequest("h100")],
      clusters: [aCluster("clu_a", { [H100]: [1] })],
      policy: "binpack",
    });
    expect(where(plan)).toEqual({ h100: "clu_a" });
    expect(queue(plan)).toEqual([["a100", 1, "NoMatchingGpuModel"]]);
  });

  it("skips clusters that are not placeable and says so when none is", () => {
    const plan = planPlacement({
      requests: [aRequest("s1")],
      clusters: [aCluster("clu_a", { [H100]: [8] }, false)],
      policy: "binpack",
    });
    expect(queue(plan)).toEqual([["s1", 1, "ClusterNotReady"]]);
  });

  it("refuses a session bigger than any node, even when the cluster's sum would fit", () => {
    const plan = planPlacement({
      requests: [aRequest("s1", { gpuCount: 8 })],
      clusters: [aCluster("clu_a", { [H100]: [8, 8, 4] })],
      policy: "binpack",
    });
    expect(queue(plan)).toEqual([["s1", 1, "NoMatchingGpuModel"]]);
  });

  it("takes extra constraints from the list without changing the plan", () => {
    const onlyB: Constraint = {
      name: "only-b",
      exclude: (_r, c) => (c.clusterId === "clu_b" ? undefined : { reason: "Policy", message: "b only" }),
    };
    const plan = planPlacement({
      requests: [aRequest("s1")],
      clusters: [aCluster("clu_a", { [H100]: [8] }), aCluster("clu_b", { [H100]: [1] })],
      policy: "spread",
      constraints: [...DEFAULT_CONSTRAINTS, onlyB],
    });
    expect(where(plan)).toEqual({ s1: "clu_b" });
  });
});

describe("capacity", () => {
  const node = (over: Partial<InventoryNodeView>): InventoryNodeView => ({
    clusterId: "clu_a",
    name: "n",
    gpuModel: H100,
    gpuAllocatable: 8,
    gpuInUse: 0,
    schedulable: true,
    ready: true,
    ...over,
  });

  it("counts allocatable GPUs on schedulable, ready nodes only", () => {
    const [a] = computeCapacity(
      [{ clusterId: "clu_a", placeable: true }],
      [
        node({ name: "n1" }),
        node({ name: "n2", schedulable: false }),
        node({ name: "n3", ready: false }),
        node({ name: "n4", gpuModel: L4, gpuAllocatable: 4 }),
      ],
      [],
    );
    expect(a?.models).toEqual({
      [H100]: { total: 8, free: 8, largestNode: 8 },
      [L4]: { total: 4, free: 4, largestNode: 4 },
    });
  });

  it("takes the larger of reported use and Berth's own holdings", () => {
    const clusters = [{ clusterId: "clu_a", placeable: true }];
    const nodes = [node({ name: "n1", gpuInUse: 3 })];
    expect(
      computeCapacity(clusters, nodes, [{ clusterId: "clu_a", gpuModel: H100, gpuCount: 1 }])[0]?.models[H100]?.free,
    ).toBe(5);
    expect(
      computeCapacity(clusters, nodes, Array(6).fill({ clusterId: "clu_a", gpuModel: H100, gpuCount: 1 }))[0]?.models[
        H100
      ]?.free,
    ).toBe(2);
  });

  it("reports the models the fleet offers", () => {
    expect(
      reportedModels([
        node({ gpuModel: L4 }),
        node({}),
        node({ gpuModel: null }),
        node({ gpuModel: "X", gpuAllocatable: 0 }),
      ]),
    ).toEqual([H100, L4]);
  });
});
