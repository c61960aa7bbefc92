export interface ClusterNodeRow {
  cluster_id: string;
  name: string;
  gpu_model: string | null;
  gpu_count: number;
  gpu_allocatable: number;
  gpu_in_use: number;
  labels: Record<string, string>;
  schedulable: boolean;
  ready: boolean;
  /** The node's GPU sharing layer ("hami"); null: whole cards only. */
  gpu_sharing: string | null;
  observed_at: Date;
  updated_at: Date;
}

export interface GpuDeviceRow {
  cluster_id: string;
  node_name: string;
  index: number;
  model: string | null;
  uuid: string | null;
  memory_mib: number | null;
  cores: number | null;
  split: number | null;
  healthy: boolean | null;
  memory_used_mib: number | null;
  cores_used: number | null;
  vgpus_used: number | null;
}

export interface NodePoolRow {
  cluster_id: string;
  gpu_model: string | null;
  nodes: number;
  ready_nodes: number;
  schedulable_nodes: number;
  gpu_count: number;
  gpu_allocatable: number;
  gpu_in_use: number;
  /** Allocatable minus in use, over ready and schedulable nodes. */
  gpu_free: number;
}

/** One node of an inventory snapshot, as the operator reports it. */
export type { InventoryNode } from "@berth/crds/internal-plane";
