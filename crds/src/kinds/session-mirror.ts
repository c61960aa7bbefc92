// The session as a GPU cluster sees it. The control plane writes one SessionMirror per placed session
// into the chosen cluster's sessions namespace (with that cluster's registered credential); the cluster's
// operator turns it into a Pod, a Service and a NetworkPolicy, and reports back through /internal.
//
// Everything the operator needs is resolved here (image reference, CPU, memory, GPU model and count),
// because a GPU cluster has no access to the management cluster's catalog. The mirror exists exactly
// while the session holds a GPU slot on that cluster: pause and terminate delete it, resume places the
// session again and writes a new one (maybe elsewhere). It carries the management Session's name, so a
// second dispatch of the same session is an AlreadyExists, never a duplicate.
import { z } from "zod";
import { ClusterId, Id, immutable, Quantity, ResourceName } from "../fields.ts";
import { defineKind, statusOf } from "../kind.ts";
import { ImageKindName } from "./image.ts";
import { GpuAssignment, GpuSliceSpec, MigProfileName } from "./session.ts";

export const SessionMirrorSpec = z.object({
  /** The session's REST id (`ses_…`); reports name it. */
  sessionId: immutable(Id),
  /** Where the management `Session` lives: its namespace (the organization's) and name. */
  source: immutable(z.object({ namespace: ResourceName, name: ResourceName })),
  /** The cluster this mirror was written to; an operator ignores mirrors that name another cluster. */
  cluster: immutable(ClusterId),
  owner: Id,
  organization: Id,
  project: Id.optional(),
  /** A container image reference, and what kind of application it serves (port, base path). */
  image: z
    .string()
    .min(1)
    .max(512)
    .regex(/^[^\s]+$/),
  imageKind: ImageKindName,
  resources: z.object({
    cpu: Quantity,
    memory: Quantity,
    gpuCount: z.int().min(1).max(64),
    /** `nvidia.com/gpu.product` of the nodes the pod may run on. */
    gpuModel: z.string().min(1).max(253),
    /** A slice of one card; absent: whole cards. */
    gpuSlice: GpuSliceSpec.optional(),
    /** A MIG profile of one card: the pod asks `nvidia.com/mig-<profile>: 1` instead of a GPU. */
    migProfile: MigProfileName.optional(),
    /** The node and cards placement chose (clusters with a sharing layer): the pod is pinned to them. */
    gpuAssignment: GpuAssignment.optional(),
    /** The cluster's sharing layer whose resource names the pod asks in; absent: plain `nvidia.com/gpu`. */
    gpuSharing: z.enum(["hami"]).optional(),
    /**
     * Node pools not granted to the session (docs/dev/node-pools.md): the pod may not run on a node whose
     * label `key` has one of `values`, so the kube-scheduler keeps it off them whatever placement counted.
     */
    avoidNodeLabels: z
      .array(z.object({ key: z.string().min(1).max(317), values: z.array(z.string().max(63)).min(1).max(64) }))
      .max(256)
      .optional(),
  }),
  /** Claims of the session's volumes on this cluster (the storage issue creates them). */
  volumes: z
    .array(
      z.object({
        claimName: ResourceName,
        /** With these, the operator makes the claim itself when it is absent (and waits for it to bind). */
        volumeId: z
          .string()
          .regex(/^vol_[a-z0-9]{20}$/)
          .optional(),
        storageClass: ResourceName.optional(),
        sizeGb: z.int().min(1).optional(),
        /** Where the volume's data sits on the pool; the same on every cluster. */
        dataPath: z.string().max(1024).optional(),
        mountPath: z
          .string()
          .max(4096)
          .regex(/^\/.*$/),
        readOnly: z.boolean().default(false),
      }),
    )
    .max(16)
    .default([]),
  /** Bumped by a restart request: the operator replaces a pod that carries an older count. */
  restartCount: z.int().min(0).default(0),
  /**
   * Bumped by the control plane on every write of this mirror, across re-creations. Reports carry the
   * revision they reflect (`observed_generation`), so the control plane drops reports about an older one.
   */
  revision: z.int().min(1),
});
export type SessionMirrorSpec = z.infer<typeof SessionMirrorSpec>;

export const SessionMirrorPhase = z.enum(["Starting", "Running", "Restarting", "Failed", "Terminating"]);
export type SessionMirrorPhase = z.infer<typeof SessionMirrorPhase>;

/** Written by the operator only when its phase changes (never per heartbeat). */
export const SessionMirrorStatus = statusOf({
  phase: SessionMirrorPhase.optional(),
  pod: ResourceName.optional(),
  node: z.string().max(253).optional(),
});
export type SessionMirrorStatus = z.infer<typeof SessionMirrorStatus>;

export const SessionMirrorKind = defineKind({
  kind: "SessionMirror",
  plural: "sessionmirrors",
  shortNames: ["sesm"],
  namespaced: true,
  description: "A placed session as its GPU cluster's operator reconciles it (written by the control plane).",
  spec: SessionMirrorSpec,
  status: SessionMirrorStatus,
  printerColumns: [
    { name: "Session", type: "string", jsonPath: ".spec.sessionId" },
    { name: "Owner", type: "string", jsonPath: ".spec.owner" },
    { name: "Phase", type: "string", jsonPath: ".status.phase" },
    { name: "GPU Model", type: "string", jsonPath: ".spec.resources.gpuModel" },
    { name: "GPUs", type: "integer", jsonPath: ".spec.resources.gpuCount" },
    { name: "Node", type: "string", jsonPath: ".status.node", priority: 1 },
    { name: "Restarts", type: "integer", jsonPath: ".spec.restartCount", priority: 1 },
  ],
});
export const SessionMirror = SessionMirrorKind.schema;
export type SessionMirror = z.infer<typeof SessionMirror>;
