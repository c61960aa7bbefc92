// The fleets the session journeys run: the GPU models and namespaces they name, the management cluster,
// a GPU cluster as the journeys describe one, and an admin client on any cluster of the bed.
import {
  type Cluster,
  type ClusterDescription,
  type FleetDescription,
  type GpuNodeDescription,
  KubeHttp,
} from "../index.ts";

export const H100 = "NVIDIA-H100-80GB-HBM3";
export const L4 = "NVIDIA-L4";
export const SESSIONS_NS = "berth-sessions";
export const SYSTEM_NS = "berth-system";

/** A fleet's management cluster. */
export const MANAGEMENT: ClusterDescription = { name: "mgmt", kind: "management" };

/**
 * A GPU cluster as the journeys run one: the `nvidia` RuntimeClass and a device plugin, HAMi's when a node
 * carries a sharing layer.
 */
export function gpuCluster(name: string, nodes: GpuNodeDescription[]): ClusterDescription {
  return {
    name,
    kind: "gpu",
    nodes,
    gpuRuntimeClass: true,
    gpuDevicePlugin: nodes.some((n) => n.sharing === "hami") ? "hami" : true,
  };
}

export const SMALL_FLEET: FleetDescription = {
  clusters: [
    MANAGEMENT,
    gpuCluster("gpu-a", [{ name: "gpu-a-1", gpuModel: H100, gpuCount: 2 }]),
    gpuCluster("gpu-b", [{ name: "gpu-b-1", gpuModel: L4, gpuCount: 2 }]),
  ],
};

export const adminKube = (c: Cluster) => new KubeHttp({ server: c.server, caPem: c.caPem, token: c.adminToken });
