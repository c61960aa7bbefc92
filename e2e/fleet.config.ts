// The local fleet that `npm start` runs and end-to-end journeys use: one management cluster and two GPU
// clusters. Names and shapes live here only.
import type { FleetDescription, GpuNodeDescription } from "./src/testbed/types.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";
const L4 = "NVIDIA-L4";

const nodes = (
  prefix: string,
  count: number,
  gpuModel: string,
  gpuCount: number,
  extra: Partial<GpuNodeDescription> = {},
): GpuNodeDescription[] =>
  Array.from({ length: count }, (_, i) => ({ name: `${prefix}-${i + 1}`, gpuModel, gpuCount, ...extra }));

export const fleetConfig: FleetDescription = {
  clusters: [
    { name: "mgmt", kind: "management" },
    {
      name: "gpu-a",
      kind: "gpu",
      // A HAMi cluster (docs/dev/gpu-sharing.md): the fractional H100 offerings run here.
      nodes: nodes("gpu-a-h100", 2, H100, 8, { sharing: "hami" }),
      gpuRuntimeClass: true,
      gpuDevicePlugin: "hami",
    },
    { name: "gpu-b", kind: "gpu", nodes: nodes("gpu-b-l4", 2, L4, 4), gpuRuntimeClass: true, gpuDevicePlugin: true },
  ],
};

export default fleetConfig;
