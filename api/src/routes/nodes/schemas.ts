import { z } from "zod";
import { Page } from "../../db/paging.ts";
import { ClusterIdParam } from "../clusters/schemas.ts";

const Timestamp = z.string().meta({ description: "RFC 3339, UTC." });
const NodeName = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, "a Kubernetes node name");

export const NodeParams = z.object({ clusterId: ClusterIdParam, nodeName: NodeName });
export const NodeActionBody = z
  .object({
    reason: z.string().regex(/\S/, "not only spaces").trim().min(1).max(500).optional().meta({
      description:
        "Why; recorded in the audit log and the action's webhook. Required to uncordon a node cordoned for hardware faults.",
    }),
  })
  .strict()
  .optional();

const ClusterFilter = ClusterIdParam.optional().meta({ description: "Only this cluster's." });
export const ListNodesQuery = Page.extend({ cluster: ClusterFilter });
export const ListGpuDevicesQuery = Page.extend({
  cluster: ClusterFilter,
  node: NodeName.optional().meta({ description: "Only this node's (with cluster)." }),
});
export const ListNodePoolsQuery = Page.extend({ cluster: ClusterFilter });

export const Node = z
  .object({
    cluster_id: z.string(),
    name: z.string(),
    gpu_model: z.string().nullable().meta({ description: "The node label nvidia.com/gpu.product." }),
    gpu_count: z.number().int(),
    gpu_allocatable: z.number().int(),
    gpu_in_use: z.number().int().meta({ description: "Sum of nvidia.com/gpu limits of the node's non-terminal pods." }),
    schedulable: z.boolean().meta({ description: "false when cordoned." }),
    ready: z.boolean(),
    labels: z.record(z.string(), z.string()),
    observed_at: Timestamp.meta({ description: "When the operator observed it." }),
    updated_at: Timestamp,
  })
  .meta({ id: "Node" });

export const GpuDevice = z
  .object({
    cluster_id: z.string(),
    node: z.string(),
    index: z.number().int(),
    model: z.string().nullable(),
    uuid: z.string().nullable(),
    memory_mib: z.number().int().nullable(),
    sharing: z
      .object({
        memory_used_mib: z.number().int(),
        memory_free_mib: z.number().int(),
        cores: z.number().int(),
        cores_used: z.number().int(),
        vgpus: z.number().int().meta({ description: "vGPUs the card splits into (pods that may share it)." }),
        vgpus_used: z.number().int(),
        healthy: z.boolean(),
      })
      .nullable()
      .meta({
        description:
          "On a node with a GPU sharing layer (docs/dev/gpu-sharing.md): what the node's pods hold on this card; null otherwise.",
      }),
  })
  .meta({ id: "GpuDevice" });

export const NodePool = z
  .object({
    cluster_id: z.string(),
    gpu_model: z.string().nullable(),
    nodes: z.number().int(),
    ready_nodes: z.number().int(),
    schedulable_nodes: z.number().int().meta({ description: "Ready and not cordoned." }),
    gpu_count: z.number().int(),
    gpu_allocatable: z.number().int(),
    gpu_in_use: z.number().int(),
    gpu_free: z.number().int().meta({ description: "Allocatable minus in use on ready, schedulable nodes." }),
  })
  .meta({ id: "NodePool", description: "The nodes of one cluster with one GPU model, with totals." });

export const NodeActionResult = z
  .object({
    cluster_id: z.string(),
    node: z.string(),
    action: z.enum(["cordon", "uncordon", "drain", "delete"]),
    outcome: z
      .enum(["success", "partial"])
      .meta({ description: "partial: some pods could not be evicted (see evictions)." }),
    schedulable: z.boolean().optional(),
    deleted: z.boolean().optional(),
    evictions: z
      .array(
        z.object({
          pod: z.string(),
          namespace: z.string(),
          result: z
            .enum(["evicted", "gone", "blocked", "failed"])
            .meta({ description: "blocked: a disruption budget refused the eviction (429)." }),
          message: z.string().optional(),
        }),
      )
      .optional(),
    node_state: Node.optional().meta({
      description: "The inventory row after the change (updated at once; the operator's next report confirms it).",
    }),
  })
  .meta({ id: "NodeActionResult" });
