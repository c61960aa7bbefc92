import { z } from "zod";
import { ClusterId, DisplayName, Gigabytes, Id, immutable, ResourceName } from "../fields.ts";
import { defineKind, statusOf } from "../kind.ts";

export const VolumeOwnerKind = z.enum(["user", "project"]);
export type VolumeOwnerKind = z.infer<typeof VolumeOwnerKind>;

/**
 * Where a volume appears in a session's container: absolute, no `.` or `..` segment, and not over the
 * paths the image's system lives in (a volume there would hide or replace them).
 */
export const SYSTEM_PATHS = [
  "/bin",
  "/boot",
  "/dev",
  "/etc",
  "/lib",
  "/lib64",
  "/proc",
  "/run",
  "/sbin",
  "/sys",
  "/usr",
  "/var",
];
export function mountPathProblem(p: string): string | undefined {
  if (!p.startsWith("/")) return "must be an absolute path (start with /)";
  const parts = p.split("/").slice(1);
  if (parts.some((s) => s === "." || s === "..")) return "must not contain . or .. segments";
  if (parts.some((s) => s === "") && p !== "/") return "must not contain empty segments or end with /";
  if (p === "/") return "must not be the root directory";
  if (SYSTEM_PATHS.some((s) => p === s || p.startsWith(`${s}/`)))
    return `must not be at or under a system path (${SYSTEM_PATHS.join(", ")})`;
  return undefined;
}
export const VolumeConditionType = {
  /** A claim exists on status.boundCluster; sessions using the volume stay on that cluster. */
  Bound: "Bound",
} as const;

export const VolumeReason = {
  ClaimCreated: "ClaimCreated",
  NoClaim: "NoClaim",
  ClaimLost: "ClaimLost",
} as const;

export const VolumeSpec = z.object({
  owner: immutable(z.object({ kind: VolumeOwnerKind, id: Id })),
  organization: immutable(Id),
  displayName: DisplayName.optional(),
  /** The quota: the claim's requested size. */
  sizeGb: z.int().min(1),
  /** A Pool; the default pool when absent. */
  pool: ResourceName.optional(),
  /** The pool's storage class, copied at creation (a pool's class does not change while it holds volumes). */
  storageClass: ResourceName.optional(),
  shares: z
    .array(
      z.object({
        kind: VolumeOwnerKind,
        id: Id,
        access: z.enum(["ReadOnly", "ReadWrite"]).default("ReadOnly"),
      }),
    )
    .max(256)
    .default([]),
  /** A locked volume cannot be mounted, resized or deleted. */
  locked: z.boolean().default(false),
  lockReason: z.string().max(1024).optional(),
});
export type VolumeSpec = z.infer<typeof VolumeSpec>;

export const VolumeStatus = statusOf({
  /** Where the claim exists; observed, so it lives in status. */
  boundCluster: ClusterId.optional(),
  claimName: ResourceName.optional(),
  /** Last time a session on boundCluster was seen using the claim; it is released some time after. */
  lastUsedAt: z.string().optional(),
  /**
   * The worker is releasing the claim (since then): sessions wait for the release to finish instead of
   * landing on a claim being deleted (controllers/src/sessions/claims.ts).
   */
  releasingSince: z.string().optional(),
  /** No session uses the claim: the worker releases it at this time unless a session mounts it first. */
  releaseAfter: z.string().optional(),
  /** The worker's idle time before it releases a claim no session uses (its `claimIdleMs`), in seconds. */
  idleReleaseSeconds: z.int().min(0).optional(),
  usedGb: Gigabytes.optional(),
});
export type VolumeStatus = z.infer<typeof VolumeStatus>;

export const VolumeKind = defineKind({
  kind: "Volume",
  plural: "volumes",
  shortNames: ["bvol"],
  namespaced: true,
  description: "A persistent volume on the shared pool; its claim is created on whichever cluster first mounts it.",
  spec: VolumeSpec,
  status: VolumeStatus,
  printerColumns: [
    { name: "Owner", type: "string", jsonPath: ".spec.owner.id" },
    { name: "Size GB", type: "integer", jsonPath: ".spec.sizeGb" },
    { name: "Bound Cluster", type: "string", jsonPath: ".status.boundCluster" },
    { name: "Locked", type: "boolean", jsonPath: ".spec.locked" },
  ],
});
export const Volume = VolumeKind.schema;
export type Volume = z.infer<typeof Volume>;
