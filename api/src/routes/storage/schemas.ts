import { z } from "zod";
import { Page } from "../../db/paging.ts";
import { StorageSettings } from "../../domain/storage/settings.ts";

const Timestamp = z.string().meta({ description: "RFC 3339, UTC." });
/** Money on the wire: a string of whole minor units (1 credit = 1,000,000), never a JSON number. */
const Units = z.string().regex(/^(0|[1-9][0-9]*)$/);
const ClusterId = z
  .string()
  .regex(/^clu_[a-z0-9]{1,59}$/, "a cluster id: clu_ followed by lowercase letters and digits");
const ObjectName = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "lowercase letters, digits and '-', starting and ending alphanumeric");
/** Whole gigabytes, 1 GB to 1 PB: no strings, fractions, zero or negatives. */
const SizeGb = z.number().int("whole gigabytes").min(1, "at least 1 GB").max(1_048_576, "at most 1,048,576 GB (1 PB)");

export const PoolParams = z.object({ pool: ObjectName });
export const VolumeParams = z.object({
  volumeId: z.string().regex(/^vol_[a-z0-9]{20}$/, "a volume id: vol_ followed by 20 lowercase letters and digits"),
});

export const CreatePoolBody = z
  .object({
    name: ObjectName.meta({ description: "The Pool resource's name (kubectl get pools)." }),
    display_name: z.string().min(1).max(128).optional(),
    cluster: ClusterId.meta({ description: "The cluster its storage server sits in." }),
    storage_class: ObjectName.meta({
      description: "The storage class that provisions from the pool, as the operators are configured with it.",
    }),
    sharing: z.enum(["all", "selected"]).optional().meta({ description: "Default all." }),
    clusters: z.array(ClusterId).min(1).max(256).optional().meta({
      description: "With sharing `selected`: the clusters allowed to place volumes on the pool.",
    }),
    manual_capacity_gb: z.number().int().min(0).max(1_073_741_824).optional().meta({
      description: "The pool's stated capacity, used when its storage driver publishes none.",
    }),
    default: z.boolean().optional().meta({
      description: "Volumes created without a pool go here. The first pool is the default unless told otherwise.",
    }),
  })
  .strict()
  .superRefine((b, ctx) => {
    if (b.sharing === "selected" && !b.clusters?.length)
      ctx.addIssue({ code: "custom", path: ["clusters"], message: "sharing `selected` needs at least one cluster" });
    if (b.sharing !== "selected" && b.clusters !== undefined)
      ctx.addIssue({ code: "custom", path: ["clusters"], message: "clusters go with sharing `selected` only" });
  })
  .meta({ id: "CreatePool" });

export const UpdatePoolBody = z
  .object({
    display_name: z.string().min(1).max(128).nullable().optional(),
    cluster: ClusterId.optional(),
    storage_class: ObjectName.optional(),
    sharing: z.enum(["all", "selected"]).optional(),
    clusters: z.array(ClusterId).min(1).max(256).optional(),
    manual_capacity_gb: z.number().int().min(0).max(1_073_741_824).nullable().optional().meta({
      description: "null removes the stated capacity.",
    }),
    default: z.boolean().optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, "give at least one field to change")
  .meta({ id: "UpdatePool" });

export const PoolCapacity = z
  .object({
    source: z.enum(["csi", "manual", "node_disk"]).meta({
      description:
        "csi: the storage driver's report; manual: the stated capacity; node_disk: the storage node's system drive (a stand-in that can be far off).",
    }),
    total_gb: z.number().int(),
    available_gb: z.number().int(),
    provisioned_gb: z.number().int().meta({ description: "Sizes of the pool's volumes, added up." }),
    observed_at: Timestamp.nullable(),
    via: z.string().nullable().meta({
      description:
        "How it was read: csi_capacity (the driver's CSIStorageCapacity objects); for manual, pool or fleet_default; for node_disk, node:<name>.",
    }),
    stale: z.boolean().meta({
      description: "An automatic reading whose cluster has not reported for three of its ticks: it may be out of date.",
    }),
  })
  .meta({ id: "PoolCapacity" });

export const StoragePool = z
  .object({
    name: z.string(),
    display_name: z.string().nullable(),
    cluster: z.string(),
    storage_class: z.string(),
    sharing: z.enum(["all", "selected"]),
    clusters: z.array(z.string()),
    manual_capacity_gb: z.number().int().nullable(),
    default: z.boolean(),
    capacity: PoolCapacity.nullable().meta({ description: "null: nothing published and no stated capacity." }),
    volumes: z.number().int(),
    created_at: Timestamp.nullable(),
  })
  .meta({ id: "StoragePool" });

/** A volume's display name. */
export const VolumeName = z.string().regex(/\S/, "not only spaces").trim().min(1).max(128);

export const CreateVolumeBody = z
  .object({
    name: z.string().regex(/\S/, "not only spaces").trim().min(1).max(128),
    size_gb: SizeGb,
    pool: ObjectName.optional().meta({ description: "Default: the default pool." }),
    project_id: z.string().min(1).max(128).optional().meta({
      description: "The project that owns the volume (one of yours); absent: you own it.",
    }),
    organization_id: z.string().min(1).max(128).optional(),
  })
  .strict()
  .meta({ id: "CreateVolume" });

export const UpdateVolumeBody = z
  .object({
    name: z.string().regex(/\S/, "not only spaces").trim().min(1).max(128).optional(),
    size_gb: SizeGb.optional().meta({ description: "Grow only." }),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, "give name or size_gb")
  .meta({ id: "UpdateVolume" });

export const LockVolumeBody = z
  .object({ reason: z.string().regex(/\S/, "not only spaces").trim().min(1).max(1024) })
  .strict()
  .meta({ id: "LockVolume" });

export const ListVolumesQuery = Page.extend({
  organization_id: z.string().min(1).max(128).optional(),
  project_id: z.string().min(1).max(128).optional(),
  pool: ObjectName.optional(),
  deleted: z
    .enum(["true", "false"])
    .transform((v) => v === "true")
    .optional()
    .meta({ description: "true: deleted volumes still in their grace period (restorable) instead of live ones." }),
  session_id: z
    .string()
    .regex(/^ses_[a-z0-9]{20}$/, "a session id: ses_ followed by 20 lowercase letters and digits")
    .optional()
    .meta({ description: "The volumes this session mounts, each with its mount (for whoever may see the session)." }),
});

export const StorageVolume = z
  .object({
    id: z.string(),
    name: z.string(),
    organization_id: z.string(),
    owner: z.object({ kind: z.enum(["user", "project"]), id: z.string() }),
    size_gb: z.number().int(),
    used_gb: z.number().int().nullable(),
    pool: z.string(),
    bound_cluster: z.string().nullable().meta({ description: "Where its claim exists now; null: nowhere." }),
    claim_name: z.string().nullable(),
    locked: z.boolean(),
    lock_reason: z.string().nullable(),
    shared_with_me: z.enum(["read_only", "read_write"]).nullable().meta({
      description:
        "Set when the caller sees the volume only because it is shared with them (or a project of theirs): how they may mount it.",
    }),
    shares: z.array(
      z.object({ kind: z.enum(["user", "project"]), id: z.string(), access: z.enum(["read_only", "read_write"]) }),
    ),
    mounts: z
      .array(z.object({ session_id: z.string(), read_only: z.boolean(), mount_path: z.string().nullable() }))
      .optional()
      .meta({ description: "Sessions (not terminated) that mount it; in the detail only." }),
    hourly_cost: Units.meta({
      description: "What it costs per hour at the storage rate (minor units, rounded up), running sessions or not.",
    }),
    deleted_at: Timestamp.nullable(),
    purge_after: Timestamp.nullable().meta({
      description: "Deleted: when its data goes; until then POST .../restore undoes the delete.",
    }),
    restored_from: z.string().nullable().meta({ description: "The snapshot it was made from, if any." }),
    restoring: z.boolean().meta({
      description: "Made from a snapshot whose data is not in its claim yet; the snapshot is not deleted meanwhile.",
    }),
    created_by: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "StorageVolume" });

export const StorageSettingsBody = StorageSettings.partial()
  .strict()
  .refine((b) => Object.keys(b).length > 0, "give at least one setting to change")
  .meta({ id: "UpdateStorageSettings" });

export const StorageSettingsView = StorageSettings.extend({
  gb_hour_credit_rate: Units.meta({
    description: "Minor units per GB-hour of provisioned size (1 credit = 1,000,000).",
  }),
  fleet_capacity_gb: z.number().int().nullable().meta({
    description: "The capacity of pools that state none and whose driver publishes none (single-pool installs).",
  }),
  delete_grace_hours: z.number().int().meta({ description: "How long a deleted volume's data is kept (undo)." }),
}).meta({ id: "StorageSettings" });

export const SetSharesBody = z
  .object({
    shares: z
      .array(
        z
          .object({
            kind: z.enum(["user", "project"]),
            id: z.string().min(1).max(128),
            access: z.enum(["read_only", "read_write"]).default("read_only"),
          })
          .strict(),
      )
      .max(256),
  })
  .strict()
  .meta({ id: "SetVolumeShares" });
