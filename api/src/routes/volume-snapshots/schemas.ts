import { z } from "zod";
import { VolumeName, VolumeParams } from "../storage/schemas.ts";

const Timestamp = z.string().meta({ description: "RFC 3339, UTC." });

export { VolumeParams };

export const SnapshotParams = VolumeParams.extend({
  snapshotId: z
    .string()
    .regex(/^snap_[a-z0-9]{20}$/, "a snapshot id: snap_ followed by 20 lowercase letters and digits"),
});

export const CreateSnapshotBody = z.object({ name: VolumeName }).strict().meta({ id: "CreateVolumeSnapshot" });

export const RestoreSnapshotBody = z
  .object({
    name: VolumeName.meta({ description: "The new volume's name (free among your volumes)." }),
    size_gb: z.number().int("whole gigabytes").min(1).max(1_048_576).optional().meta({
      description: "Default and least: the snapshot's size.",
    }),
    project_id: z.string().min(1).max(128).optional().meta({
      description: "The project that owns the new volume (one of yours); absent: you own it.",
    }),
  })
  .strict()
  .meta({ id: "RestoreVolumeSnapshot" });

export const VolumeSnapshot = z
  .object({
    id: z.string(),
    name: z.string(),
    volume_id: z.string().meta({ description: "The volume it was taken of." }),
    state: z.enum(["creating", "ready", "failed", "deleting"]),
    size_gb: z.number().int().meta({
      description: "The volume's size when it was taken: what it holds against the quota and is billed for.",
    }),
    restore_size_bytes: z.string().nullable().meta({
      description: "What the storage driver says a restore needs (bytes, a decimal string); null until ready.",
    }),
    failure: z.string().nullable().meta({
      description:
        "Failed: why, as the cluster said it. Creating: the storage driver's last error while it tries again (the snapshot fails if it lasts 10 minutes).",
    }),
    cluster: z.string().nullable().meta({ description: "The cluster holding it; null until the worker took it." }),
    created_by: z.string(),
    created_at: Timestamp,
    ready_at: Timestamp.nullable(),
  })
  .meta({ id: "VolumeSnapshot" });
