import { z } from "zod";
import { ClusterId, DisplayName, Gigabytes, ResourceName, rule, Timestamp } from "../fields.ts";
import { defineKind, statusOf } from "../kind.ts";

export const PoolSharing = z.enum(["all", "selected"]);
export type PoolSharing = z.infer<typeof PoolSharing>;

/** In order of trust: the storage driver's report, the stated figure, the storage node's system drive. */
export const CapacitySource = z.enum(["csi", "manual", "node_disk"]);
export type CapacitySource = z.infer<typeof CapacitySource>;

export const PoolConditionType = {
  /** The storage class exists on the pool's cluster. */
  Ready: "Ready",
} as const;

export const PoolReason = {
  StorageClassFound: "StorageClassFound",
  StorageClassMissing: "StorageClassMissing",
  ClusterUnreachable: "ClusterUnreachable",
} as const;

export const PoolSpec = rule(
  z.object({
    /** The cluster its storage server sits in. */
    cluster: ClusterId,
    /** Equals the class name the operators are configured with. */
    storageClass: ResourceName,
    displayName: DisplayName.optional(),
    sharing: PoolSharing.default("all"),
    /** With sharing `selected`: the clusters allowed to place volumes on the pool. */
    clusters: z.array(ClusterId).max(256).optional(),
    manualCapacityGb: Gigabytes.optional(),
    /** Where volumes go when their creator names no pool; at most one pool has it (the API keeps it so). */
    default: z.boolean().default(false),
  }),
  "self.sharing == 'all' || (has(self.clusters) && size(self.clusters) > 0)",
  "sharing 'selected' needs at least one cluster in clusters",
  (s) => s.sharing === "all" || (s.clusters?.length ?? 0) > 0,
);
export type PoolSpec = z.infer<typeof PoolSpec>;

export const PoolStatus = statusOf({
  /** Every reading names its source; with nothing published it is the stated capacity, as `manual`. */
  capacity: z
    .object({
      totalGb: Gigabytes,
      availableGb: Gigabytes.optional(),
      source: CapacitySource,
      observedAt: Timestamp.optional(),
      /** How the driver's figure was read (csi): its CSIStorageCapacity objects. */
      via: z.string().max(64).optional(),
    })
    .optional(),
  /** The last changes of the reading's source, newest last: a source never changes silently. */
  sourceChanges: z
    .array(z.object({ from: CapacitySource.optional(), to: CapacitySource.optional(), at: Timestamp }))
    .max(20)
    .optional(),
});
export type PoolStatus = z.infer<typeof PoolStatus>;

export const PoolKind = defineKind({
  kind: "Pool",
  plural: "pools",
  shortNames: ["spool"],
  namespaced: false,
  description: "A shared storage pool that every permitted cluster mounts through one storage class.",
  spec: PoolSpec,
  status: PoolStatus,
  printerColumns: [
    { name: "Cluster", type: "string", jsonPath: ".spec.cluster" },
    { name: "Storage Class", type: "string", jsonPath: ".spec.storageClass" },
    { name: "Sharing", type: "string", jsonPath: ".spec.sharing" },
    { name: "Capacity GB", type: "integer", jsonPath: ".status.capacity.totalGb" },
    { name: "Source", type: "string", jsonPath: ".status.capacity.source" },
  ],
});
export const Pool = PoolKind.schema;
export type Pool = z.infer<typeof Pool>;
