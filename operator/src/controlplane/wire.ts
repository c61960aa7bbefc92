// Bodies the operator sends to the control plane's internal plane (docs/dev/internal-api.md). These are
// the wire format: snake_case, JSON-safe, nothing from a Kubernetes object that the contract does not
// name.

export interface GpuDevice {
  index: number;
  /** The node's `gpu_model`. */
  model: string | null;
  uuid?: string;
  memory_mib?: number;
}

export interface InventoryNode {
  name: string;
  /** From the node label `nvidia.com/gpu.product`; null when the node does not carry it. */
  gpu_model: string | null;
  gpu_count: number;
  gpu_allocatable: number;
  gpu_in_use: number;
  labels: Record<string, string>;
  schedulable: boolean;
  ready: boolean;
  devices: GpuDevice[];
}

/** `PUT /internal/v1/inventory`: the full set; nodes missing from it are removed by the control plane. */
export interface InventoryReport {
  cluster_id: string;
  observed_at: string;
  nodes: InventoryNode[];
}

export interface InventoryAnswer {
  accepted: number;
  removed: number;
}
