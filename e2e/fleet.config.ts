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
    {
      name: "gpu-b",
      kind: "gpu",
      nodes: nodes("gpu-b-l4", 2, L4, 4),
      gpuRuntimeClass: true,
      gpuDevicePlugin: true,
      // A real kubelet and containerd (e2e/src/testbed/real-node), started by `npm start` where the machine
      // allows it: here, not on gpu-a, because whole cards need only the plain device plugin's
      // `nvidia.com/gpu`, while a HAMi node's slices also need `nvidia.com/gpumem`/`gpucores`, HAMi's card
      // register and its in-container library (docs/dev/gpu-sharing.md), none of which a fake card has.
      realNode: { name: "gpu-b-real-1", gpuModel: L4, gpuCount: 2, gpuMemoryMib: 23034 },
    },
  ],
};

export default fleetConfig;
