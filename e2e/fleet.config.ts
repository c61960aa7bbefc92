// The local fleet that `npm start` runs and end-to-end journeys use: one management cluster and two GPU
// clusters. Names and shapes live here only.
import type { FleetDescription, GpuNodeDescription } from "./src/testbed/types.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";
const L4 = "NVIDIA-L4";

const nodes = (prefix: string, count: number, gpuModel: string, gpuCount: number): GpuNodeDescription[] =>
  Array.from({ length: count }, (_, i) => ({ name: `${prefix}-${i + 1}`, gpuModel, gpuCount }));

export const fleetConfig: FleetDescription = {
  clusters: [
    { name: "mgmt", kind: "management" },
    {
      name: "gpu-a",
      kind: "gpu",
      nodes: nodes("gpu-a-h100", 2, H100, 8),
      gpuRuntimeClass: true,
      gpuDevicePlugin: true,
    },
    { name: "gpu-b", kind: "gpu", nodes: nodes("gpu-b-l4", 2, L4, 4), gpuRuntimeClass: true, gpuDevicePlugin: true },
  ],
};

export default fleetConfig;
