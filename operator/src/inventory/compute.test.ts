import { describe, expect, it } from "vitest";
import { aNode, aPod } from "./builders.test-support.ts";
import { computeInventory, inventoryFingerprint, podGpus } from "./compute.ts";
import { slimNode, slimPod } from "./slim.ts";

describe("computeInventory", () => {
  it("reports a GPU node with its model, counts, labels, readiness and one device per GPU", () => {
    const [node] = computeInventory([aNode("gpu-1").withGpus(2, "NVIDIA-A100").build()], []);
    expect(node).toEqual({
      name: "gpu-1",
      gpu_model: "NVIDIA-A100",
      gpu_count: 2,
      gpu_allocatable: 2,
      gpu_in_use: 0,
      labels: {
        "kubernetes.io/hostname": "gpu-1",
        "nvidia.com/gpu.count": "2",
        "nvidia.com/gpu.product": "NVIDIA-A100",
      },
      schedulable: true,
      ready: true,
      devices: [
        { index: 0, model: "NVIDIA-A100" },
        { index: 1, model: "NVIDIA-A100" },
      ],
    });
  });

  const cases: {
    name: string;
    nodes: ReturnType<ReturnType<typeof aNode>["build"]>[];
    pods?: ReturnType<typeof aPod>[];
    expect: Record<string, unknown>;
  }[] = [
    {
      name: "a cordoned node is not schedulable",
      nodes: [aNode("n").withGpus(8).cordoned().build()],
      expect: { schedulable: false, ready: true },
    },
    {
      name: "a node whose Ready condition is False is not ready",
      nodes: [aNode("n").withGpus(8).notReady().build()],
      expect: { ready: false },
    },
    {
      name: "allocatable below capacity is reported as such (a GPU the device plugin marked unhealthy)",
      nodes: [aNode("n").withGpus(8).withAllocatable(7).build()],
      expect: { gpu_count: 8, gpu_allocatable: 7 },
    },
    {
      name: "in-use sums the GPU limits of the node's running and pending pods",
      nodes: [aNode("n").withGpus(8).build()],
      pods: [aPod("a", { node: "n", gpus: 2 }), aPod("b", { node: "n", gpus: 1, phase: "Pending" })],
      expect: { gpu_in_use: 3 },
    },
    {
      name: "succeeded and failed pods hold no GPU",
      nodes: [aNode("n").withGpus(8).build()],
      pods: [aPod("a", { node: "n", gpus: 2, phase: "Succeeded" }), aPod("b", { node: "n", gpus: 1, phase: "Failed" })],
      expect: { gpu_in_use: 0 },
    },
    {
      name: "pods of other nodes, unbound pods and pods without GPUs do not count",
      nodes: [aNode("n").withGpus(8).build()],
      pods: [aPod("a", { node: "m", gpus: 2 }), aPod("b", { gpus: 1, phase: "Pending" }), aPod("c", { node: "n" })],
      expect: { gpu_in_use: 0 },
    },
    {
      name: "device UUIDs come from the berth.dev/gpu-uuids annotation in index order, memory from the label",
      nodes: [
        aNode("n")
          .withGpus(2, "L4")
          .withAnnotation("berth.dev/gpu-uuids", "GPU-aaa, GPU-bbb")
          .withLabel("nvidia.com/gpu.memory", "23034")
          .build(),
      ],
      expect: {
        devices: [
          { index: 0, model: "L4", uuid: "GPU-aaa", memory_mib: 23034 },
          { index: 1, model: "L4", uuid: "GPU-bbb", memory_mib: 23034 },
        ],
      },
    },
    {
      name: "with GPU sharing, devices follow the physical count label while counts follow capacity",
      nodes: [aNode("n").withGpus(8, "H100-SHARED").withLabel("nvidia.com/gpu.count", "2").build()],
      expect: {
        gpu_count: 8,
        devices: [
          { index: 0, model: "H100-SHARED" },
          { index: 1, model: "H100-SHARED" },
        ],
      },
    },
    {
      name: "a node with the GPU resource but no product label has a null model",
      nodes: [
        (() => {
          const n = aNode("n").withGpus(1).build();
          delete n.metadata?.labels?.["nvidia.com/gpu.product"];
          return n;
        })(),
      ],
      expect: { gpu_model: null, devices: [{ index: 0, model: null }] },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const [node] = computeInventory(c.nodes, c.pods ?? []);
      expect(node).toMatchObject(c.expect);
    });
  }

  it("leaves out nodes without GPUs and sorts the rest by name", () => {
    const out = computeInventory(
      [aNode("b").withGpus(1).build(), aNode("cpu-only").build(), aNode("a").withGpus(1).build()],
      [],
    );
    expect(out.map((n) => n.name)).toEqual(["a", "b"]);
  });
});

describe("podGpus", () => {
  it("adds sidecars to the app containers and takes the largest init container when it is larger", () => {
    expect(podGpus(aPod("p", { gpus: 1, sidecarGpus: 1 }))).toBe(2);
    expect(podGpus(aPod("p", { gpus: 1, initGpus: 4 }))).toBe(4);
    expect(podGpus(aPod("p", { gpus: 3, initGpus: 2 }))).toBe(3);
  });
});

describe("heartbeat churn", () => {
  it("a node whose only change is a heartbeat has the same projection and the same inventory", () => {
    const before = aNode("n").withGpus(8).heartbeatAt("2026-11-22T06:00:00Z").build();
    const after = aNode("n").withGpus(8).heartbeatAt("2026-11-22T06:00:40Z").build();
    expect(JSON.stringify(slimNode(after))).toBe(JSON.stringify(slimNode(before)));
    expect(inventoryFingerprint(computeInventory([after], []))).toBe(
      inventoryFingerprint(computeInventory([before], [])),
    );
  });

  it("a cordon changes both", () => {
    const before = aNode("n").withGpus(8).build();
    const after = aNode("n").withGpus(8).cordoned().build();
    expect(JSON.stringify(slimNode(after))).not.toBe(JSON.stringify(slimNode(before)));
    expect(inventoryFingerprint(computeInventory([after], []))).not.toBe(
      inventoryFingerprint(computeInventory([before], [])),
    );
  });

  it("the projections compute the same inventory as the full objects", () => {
    const nodes = [
      aNode("a").withGpus(8).withAnnotation("berth.dev/gpu-uuids", "x,y").build(),
      aNode("b").withGpus(4).notReady().build(),
    ];
    const pods = [aPod("p", { node: "a", gpus: 2 }), aPod("q", { node: "b", gpus: 1, phase: "Pending" })];
    const slimmed = computeInventory(
      nodes.map(slimNode).filter((n) => n !== undefined),
      pods.map(slimPod).filter((p) => p !== undefined),
    );
    expect(slimmed).toEqual(computeInventory(nodes, pods));
  });

  it("a pod going from Pending to Running has the same projection; a finished pod has none", () => {
    expect(slimPod(aPod("p", { node: "n", gpus: 1, phase: "Pending" }))).toEqual(
      slimPod(aPod("p", { node: "n", gpus: 1 })),
    );
    expect(slimPod(aPod("p", { node: "n", gpus: 1, phase: "Succeeded" }))).toBeUndefined();
    expect(slimPod(aPod("p", { node: "n" }))).toBeUndefined();
  });
});

describe("MIG instances in the inventory", () => {
  it("reports per profile what the node advertises and what its live pods hold", () => {
    const node = aNode("mig-1").withGpus(0, "NVIDIA-H100-80GB-HBM3").build();
    const status = node.status as { allocatable: Record<string, string>; capacity: Record<string, string> };
    status.allocatable["nvidia.com/mig-3g.40gb"] = "2";
    status.allocatable["nvidia.com/mig-1g.10gb"] = "2";
    const pod = (name: string, phase: string) => ({
      metadata: { name, namespace: "s" },
      spec: {
        nodeName: "mig-1",
        containers: [{ resources: { limits: { "nvidia.com/mig-3g.40gb": "1" } } }],
      },
      status: { phase },
    });
    const [n] = computeInventory([node], [pod("a", "Running"), pod("b", "Succeeded")]);
    expect(n?.mig).toEqual({ "1g.10gb": { allocatable: 2, in_use: 0 }, "3g.40gb": { allocatable: 2, in_use: 1 } });
    expect(n?.gpu_in_use).toBe(0);
  });

  it("leaves mig out for a node that advertises none", () => {
    const [n] = computeInventory([aNode("g").withGpus(2).build()], []);
    expect(n && "mig" in n).toBe(false);
  });
});

describe("MIG through the watches' projections", () => {
  it("keeps a node's MIG resources and a MIG pod's instances, so the inventory reports them", () => {
    const node = aNode("mig-1").withGpus(0, "NVIDIA-H100-80GB-HBM3").build();
    (node.status as { allocatable: Record<string, string> }).allocatable["nvidia.com/mig-3g.40gb"] = "2";
    const pod = {
      metadata: { name: "p", namespace: "s" },
      spec: { nodeName: "mig-1", containers: [{ resources: { limits: { "nvidia.com/mig-3g.40gb": "1" } } }] },
      status: { phase: "Running" },
    };
    const slimmed = slimPod(pod);
    expect(slimmed).toBeDefined();
    const [n] = computeInventory([slimNode(node) as NonNullable<ReturnType<typeof slimNode>>], [slimmed as never]);
    expect(n?.mig).toEqual({ "3g.40gb": { allocatable: 2, in_use: 1 } });
  });
});
