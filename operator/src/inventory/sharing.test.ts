import { formatHamiRegister, type HamiCard, parseHamiRegister } from "@berth/crds";
import { describe, expect, it } from "vitest";
import { aNode } from "./builders.test-support.ts";
import { computeInventory, type PodLike } from "./compute.ts";
import { slimNode, slimPod } from "./slim.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";
const card = (i: number, over: Partial<HamiCard> = {}): HamiCard => ({
  uuid: `GPU-${i}`,
  index: i,
  split: 10,
  memoryMib: 81559,
  cores: 100,
  type: H100,
  numa: 0,
  healthy: true,
  ...over,
});

function hamiNode(name: string, cards: HamiCard[]) {
  return aNode(name)
    .withGpus(cards.length * 10, H100)
    .withAnnotation("hami.io/node-nvidia-register", formatHamiRegister(cards))
    .build();
}

function aHamiPod(
  name: string,
  node: string,
  limits: Record<string, string>,
  annotations: Record<string, string> = {},
): PodLike {
  return {
    metadata: { name, namespace: "berth-sessions", annotations },
    spec: { nodeName: node, containers: [{ resources: { limits } }] },
    status: { phase: "Running" },
  };
}

describe("HAMi's register", () => {
  it("reads the JSON form and the older colon form alike", () => {
    const json = formatHamiRegister([card(0), card(1, { healthy: false })]);
    const legacy = "GPU-0,10,81559,100,NVIDIA-H100-80GB-HBM3,0,true:GPU-1,10,81559,100,NVIDIA-H100-80GB-HBM3,0,false:";
    for (const v of [json, legacy]) {
      const cards = parseHamiRegister(v);
      expect(cards?.map((c) => [c.uuid, c.index, c.split, c.memoryMib, c.cores, c.healthy])).toEqual([
        ["GPU-0", 0, 10, 81559, 100, true],
        ["GPU-1", 1, 10, 81559, 100, false],
      ]);
    }
    expect(parseHamiRegister("garbage")).toBeUndefined();
    expect(parseHamiRegister("[not json")).toBeUndefined();
  });
});

describe("inventory of a HAMi node", () => {
  it("counts cards, not vGPUs, and what each pinned pod holds on its card", () => {
    const node = hamiNode("n1", [card(0), card(1)]);
    const pods = [
      aHamiPod(
        "eighth",
        "n1",
        { "nvidia.com/gpu": "1", "nvidia.com/gpumem": "10194", "nvidia.com/gpucores": "12" },
        { "nvidia.com/use-gpuuuid": "GPU-1" },
      ),
      aHamiPod(
        "quarter",
        "n1",
        { "nvidia.com/gpu": "1", "nvidia.com/gpumem": "20389", "nvidia.com/gpucores": "25" },
        { "nvidia.com/use-gpuuuid": "GPU-1" },
      ),
    ];
    const [n] = computeInventory([node], pods);
    expect(n).toMatchObject({ gpu_count: 2, gpu_allocatable: 2, gpu_in_use: 1, gpu_sharing: "hami" });
    expect(n?.devices).toEqual([
      expect.objectContaining({ uuid: "GPU-0", memory_used_mib: 0, cores_used: 0, vgpus_used: 0 }),
      expect.objectContaining({ uuid: "GPU-1", memory_used_mib: 30583, cores_used: 37, vgpus_used: 2 }),
    ]);
  });

  it("trusts HAMi's own allocation record, takes a whole card for a pod without gpumem, and places unpinned pods on the first card with room", () => {
    const node = hamiNode("n1", [card(0), card(1), card(2, { healthy: false })]);
    const pods = [
      aHamiPod(
        "allocated",
        "n1",
        { "nvidia.com/gpu": "1", "nvidia.com/gpumem": "4000" },
        { "hami.io/vgpu-devices-allocated": "GPU-1,NVIDIA,4000,30:;" },
      ),
      aHamiPod("whole", "n1", { "nvidia.com/gpu": "1" }),
    ];
    const [n] = computeInventory([node], pods);
    expect(n).toMatchObject({ gpu_count: 3, gpu_allocatable: 2 });
    expect(n?.devices.map((d) => [d.uuid, d.memory_used_mib, d.cores_used, d.healthy])).toEqual([
      ["GPU-0", 81559, 0, true],
      ["GPU-1", 4000, 30, true],
      ["GPU-2", 0, 0, false],
    ]);
  });

  it("keeps what it needs through the watches' projections", () => {
    const node = hamiNode("n1", [card(0)]);
    const pod = aHamiPod(
      "p",
      "n1",
      { "nvidia.com/gpu": "1", "nvidia.com/gpumem": "10194", "nvidia.com/gpucores": "12", cpu: "2" },
      { "nvidia.com/use-gpuuuid": "GPU-0", other: "x" },
    );
    const slim = [computeInventory([slimNode(node) as never], [slimPod(pod) as never])];
    expect(slim[0]?.[0]?.devices[0]).toMatchObject({ memory_used_mib: 10194, cores_used: 12, vgpus_used: 1 });
    expect(slimPod(pod)?.metadata?.annotations).toEqual({ "nvidia.com/use-gpuuuid": "GPU-0" });
  });
});
