import type { z } from "zod";
import type { ClusterNodeRow, GpuDeviceRow, NodePoolRow } from "../../db/operations/inventory/types.ts";
import type { NodeActionResult as Result } from "../../domain/clusters/nodeActions.ts";
import type { GpuDevice, Node, NodeActionResult, NodePool } from "./schemas.ts";

export function presentNode(r: ClusterNodeRow): z.input<typeof Node> {
  return {
    cluster_id: r.cluster_id,
    name: r.name,
    gpu_model: r.gpu_model,
    gpu_count: r.gpu_count,
    gpu_allocatable: r.gpu_allocatable,
    gpu_in_use: r.gpu_in_use,
    schedulable: r.schedulable,
    ready: r.ready,
    labels: r.labels ?? {},
    observed_at: new Date(r.observed_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}

export function presentGpuDevice(r: GpuDeviceRow): z.input<typeof GpuDevice> {
  return {
    cluster_id: r.cluster_id,
    node: r.node_name,
    index: r.index,
    model: r.model,
    uuid: r.uuid,
    memory_mib: r.memory_mib,
    sharing:
      r.split !== null && r.split !== undefined
        ? {
            memory_used_mib: r.memory_used_mib ?? 0,
            memory_free_mib: Math.max(0, (r.memory_mib ?? 0) - (r.memory_used_mib ?? 0)),
            cores: r.cores ?? 100,
            cores_used: r.cores_used ?? 0,
            vgpus: r.split,
            vgpus_used: r.vgpus_used ?? 0,
            healthy: r.healthy !== false,
          }
        : null,
  };
}

export function presentNodePool(r: NodePoolRow): z.input<typeof NodePool> {
  return {
    cluster_id: r.cluster_id,
    gpu_model: r.gpu_model,
    nodes: r.nodes,
    ready_nodes: r.ready_nodes,
    schedulable_nodes: r.schedulable_nodes,
    gpu_count: r.gpu_count,
    gpu_allocatable: r.gpu_allocatable,
    gpu_in_use: r.gpu_in_use,
    gpu_free: r.gpu_free,
  };
}

export function presentNodeAction(r: Result): z.input<typeof NodeActionResult> {
  return {
    cluster_id: r.clusterId,
    node: r.node,
    action: r.action,
    outcome: r.outcome,
    ...(r.schedulable === undefined ? {} : { schedulable: r.schedulable }),
    ...(r.deleted === undefined ? {} : { deleted: r.deleted }),
    ...(r.evictions
      ? {
          evictions: r.evictions.map((e) => ({
            pod: e.pod,
            namespace: e.namespace,
            result: e.result,
            ...(e.message ? { message: e.message } : {}),
          })),
        }
      : {}),
    ...(r.inventory ? { node_state: presentNode(r.inventory) } : {}),
  };
}
