import { describe, expect, it } from "vitest";
import { gpuRequestOf } from "./manifests.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";
const base = { cpu: "2", memory: "8Gi", gpuCount: 1, gpuModel: H100 };

describe("a session pod's GPU request", () => {
  it("without a sharing layer: whole nvidia.com/gpu cards on any node of the model", () => {
    expect(gpuRequestOf({ ...base, gpuCount: 2 })).toEqual({
      resources: { "nvidia.com/gpu": "2" },
      annotations: {},
      nodeSelector: { "nvidia.com/gpu.product": H100 },
    });
  });

  it("a slice on HAMi: one vGPU with its memory and cores, pinned to the chosen card and node", () => {
    const r = gpuRequestOf({
      ...base,
      gpuSlice: { slicesPerCard: 8, memoryMib: 10194, cores: 12 },
      gpuAssignment: { node: "n1", cards: ["GPU-a"] },
      gpuSharing: "hami",
    });
    expect(r).toEqual({
      resources: { "nvidia.com/gpu": "1", "nvidia.com/gpumem": "10194", "nvidia.com/gpucores": "12" },
      annotations: { "nvidia.com/use-gpuuuid": "GPU-a" },
      nodeSelector: { "nvidia.com/gpu.product": H100, "kubernetes.io/hostname": "n1" },
    });
  });

  it("whole cards on HAMi: all their cores (exclusive), pinned to the chosen cards", () => {
    const r = gpuRequestOf({
      ...base,
      gpuCount: 2,
      gpuAssignment: { node: "n1", cards: ["GPU-a", "GPU-b"] },
      gpuSharing: "hami",
    });
    expect(r.resources).toEqual({ "nvidia.com/gpu": "2", "nvidia.com/gpucores": "100" });
    expect(r.annotations).toEqual({ "nvidia.com/use-gpuuuid": "GPU-a,GPU-b" });
  });
});

describe("a MIG session pod's request", () => {
  it("asks one instance of its profile and no whole GPU, on any node of the model (the scheduler finds one free)", () => {
    expect(gpuRequestOf({ ...base, migProfile: "3g.40gb" })).toEqual({
      resources: { "nvidia.com/mig-3g.40gb": "1" },
      annotations: {},
      nodeSelector: { "nvidia.com/gpu.product": H100 },
    });
  });
});
