import { z } from "zod";
import { ClusterId, DisplayName, Id, immutable, keptOnceSet, ResourceName, Timestamp } from "../fields.ts";
import { defineKind, statusOf } from "../kind.ts";
import { resourcePath } from "../paths.ts";

/**
 * `guaranteed`: within the organization's and project's guarantee, never reclaimed; `borrowed`: idle
 * capacity beyond it, at the borrowed rate, paused (after a warning) when a guaranteed request needs it.
 */
export const CapacityClass = z.enum(["guaranteed", "borrowed"]);
export type CapacityClass = z.infer<typeof CapacityClass>;

/** What the user asked for. The controllers move `status.phase` towards it. */
export const SessionDesiredState = z.enum(["Running", "Paused", "Terminated"]);
export type SessionDesiredState = z.infer<typeof SessionDesiredState>;

export const SessionPhase = z.enum([
  "Pending", // accepted, not yet placed
  "Queued", // no free GPU of the offering's model (or on the pinned cluster); see status.queue
  "Starting", // placed and dispatched, pod not ready yet
  "Running",
  "Pausing", // pod being deleted; volumes kept
  "Paused",
  "Resuming", // placed again after a pause
  "Restarting", // pod being replaced
  "Terminating",
  "Terminated",
  "Failed",
  "Unknown", // its cluster stopped reporting
]);
export type SessionPhase = z.infer<typeof SessionPhase>;

export const SessionConditionType = {
  /** A cluster was chosen (False with NoCapacity while queued). */
  Scheduled: "Scheduled",
  /** The mirror resource exists on the chosen cluster. */
  Dispatched: "Dispatched",
  /** The pod is ready and the connect links work. */
  Ready: "Ready",
  /** Usage is being charged. */
  Billable: "Billable",
} as const;
export type SessionConditionType = (typeof SessionConditionType)[keyof typeof SessionConditionType];

export const SessionReason = {
  // Scheduled
  Placed: "Placed",
  PinnedCluster: "PinnedCluster",
  VolumeLocality: "VolumeLocality",
  NoCapacity: "NoCapacity",
  PinnedClusterFull: "PinnedClusterFull",
  NoMatchingGpuModel: "NoMatchingGpuModel",
  /** A slice of a card, and no cluster with the model runs a GPU sharing layer. */
  NoSharingLayer: "NoSharingLayer",
  NodeLost: "NodeLost",
  // Dispatched
  MirrorCreated: "MirrorCreated",
  DispatchFailed: "DispatchFailed",
  ClusterUnreachable: "ClusterUnreachable",
  // Ready
  PodPending: "PodPending",
  /** A volume's claim on the session's cluster exists but is not bound yet. */
  WaitingForClaim: "WaitingForClaim",
  /** A volume's claim did not bind in time (no volume of its class, a storage driver down). */
  ClaimNotBound: "ClaimNotBound",
  PodRunning: "PodRunning",
  ImagePullFailed: "ImagePullFailed",
  PodFailed: "PodFailed",
  // Billable
  Metering: "Metering",
  NotRunning: "NotRunning",
  // why a session stopped (any type)
  PausedByUser: "PausedByUser",
  InsufficientCredits: "InsufficientCredits",
  MemberRemoved: "MemberRemoved",
  /** Paused: every activity signal was known and idle for the idle timeout (docs/dev/idle-and-limits.md). */
  Idle: "Idle",
  /** Paused: the session ran for its policy's maximum running time. */
  MaxRuntime: "MaxRuntime",
  /** Paused: a borrowed session gave its GPUs back to a guaranteed one (docs/dev/fair-share.md). */
  CapacityReclaimed: "CapacityReclaimed",
  /** Warning: a borrowed session will be paused for a guaranteed one after the grace period. */
  CapacityReclaimWarning: "CapacityReclaimWarning",
  RestartRequested: "RestartRequested",
  TerminatedByUser: "TerminatedByUser",
  // the session controllers' other condition and Event reasons
  /** Scheduled=False: a constraint keeps the session off every cluster that has room. */
  ClusterNotReady: "ClusterNotReady",
  /** Ready=Unknown: the session's cluster stopped reporting for longer than the grace period. */
  ClusterNotReporting: "ClusterNotReporting",
  /** The session's cluster was deregistered under it. */
  ClusterGone: "ClusterGone",
  /** The pod found no node with room in its cluster for too long; the session is placed again. */
  Unschedulable: "Unschedulable",
  /** Queued: waiting to be placed (first pass). */
  Waiting: "Waiting",
  Pausing: "Pausing",
  Resumed: "Resumed",
  Started: "Started",
  Terminating: "Terminating",
  Terminated: "Terminated",
  Deleted: "Deleted",
  /** The mirror disappeared from the cluster although the session should run: it is written again. */
  MirrorLost: "MirrorLost",
} as const;
export type SessionReason = (typeof SessionReason)[keyof typeof SessionReason];

/** A MIG profile as NVIDIA's device plugin names its resource: `<compute>g.<memory>gb`. */
export const MigProfileName = z.string().regex(/^[1-7]g\.[0-9]{1,3}gb$/);

export const GpuSliceSpec = z.object({
  slicesPerCard: z.int().min(2).max(32),
  memoryMib: z.int().min(1024).max(4_194_304),
  cores: z.int().min(1).max(100),
});
export type GpuSliceSpec = z.infer<typeof GpuSliceSpec>;

/** The cards placement chose on a cluster with a sharing layer: the pod is pinned to them. */
export const GpuAssignment = z.object({
  node: z.string().min(1).max(253),
  /** Card UUIDs (one for a slice). */
  cards: z.array(z.string().min(1).max(253)).min(1).max(64),
});
export type GpuAssignment = z.infer<typeof GpuAssignment>;

export const SessionVolumeMount = z.object({
  /** A Volume in the session's namespace. */
  volume: ResourceName,
  /** Absolute path in the container; the operator picks one when absent. */
  mountPath: z
    .string()
    .max(4096)
    .regex(/^\/.*$/)
    .optional(),
  readOnly: z.boolean().default(false),
});
export type SessionVolumeMount = z.infer<typeof SessionVolumeMount>;

export const SessionSpec = keptOnceSet(
  keptOnceSet(
    z.object({
      /** User id of the person the session belongs to. */
      owner: immutable(Id),
      organization: immutable(Id),
      project: Id.optional(),
      displayName: DisplayName.optional(),
      /** Names of the cluster-scoped catalog resources. */
      offering: ResourceName,
      preset: ResourceName,
      image: ResourceName,
      /**
       * GPUs the session holds, fixed at creation: quotas and billing count these, so a later change of the
       * preset or offering must not make it run on more or fewer. Absent on sessions from before: the catalog's.
       */
      gpuCount: immutable(z.int().min(1).max(64)).optional(),
      /**
       * A fraction of one card, fixed at creation from the offering (docs/dev/gpu-sharing.md): one of
       * `slicesPerCard` slices with `memoryMib` of GPU memory and `cores` percent of the card's cores.
       * Absent: whole cards.
       */
      gpuSlice: immutable(GpuSliceSpec).optional(),
      /**
       * A MIG profile of one card ("3g.40gb"), fixed at creation from the offering (docs/dev/gpu-sharing.md):
       * the pod asks `nvidia.com/mig-<profile>: 1`. Absent: whole cards or a slice.
       */
      migProfile: immutable(MigProfileName).optional(),
      volumes: z.array(SessionVolumeMount).max(16).default([]),
      /** Place only on this cluster; the session waits there when it is full. */
      clusterPin: ClusterId.optional(),
      desiredState: SessionDesiredState.default("Running"),
      /** Higher first in the queue; ties go to the older session. */
      priority: z.int32().default(0),
      /** Idle timeout asked for at creation, within the policy's bounds; absent: the policy's. */
      idleTimeoutMinutes: z.int().min(0).max(10_080).optional(),
      /** Maximum running time asked for at creation, at most the policy's; absent: the policy's. */
      maxRuntimeMinutes: z.int().min(1).max(525_600).optional(),
      /** Fixed at creation; absent (sessions from before): guaranteed. */
      capacityClass: immutable(CapacityClass).optional(),
    }),
    "gpuCount",
  ),
  "gpuSlice",
);
export type SessionSpec = z.infer<typeof SessionSpec>;

export const SessionStatus = statusOf({
  phase: SessionPhase.optional(),
  cluster: ClusterId.optional(),
  node: z.string().max(253).optional(),
  gpuModel: z.string().max(253).optional(),
  gpuDevices: z.array(z.string().max(253)).max(64).optional(),
  /** Set by placement on a cluster with a sharing layer, while the session holds its cards there. */
  gpuAssignment: GpuAssignment.optional(),
  /** Paths under the cluster's session domain: /proxy/{cr}/lab|terminal|code/. */
  connect: z
    .object({
      lab: z.string().max(1024).optional(),
      terminal: z.string().max(1024).optional(),
      code: z.string().max(1024).optional(),
    })
    .optional(),
  /** Present while Queued. The position is refreshed when it changes, not on every tick. */
  queue: z
    .object({
      position: z.int().min(1),
      reason: z.string().max(1024),
    })
    .optional(),
  queuedAt: Timestamp.optional(),
  scheduledAt: Timestamp.optional(),
  startedAt: Timestamp.optional(),
  pausedAt: Timestamp.optional(),
  terminatedAt: Timestamp.optional(),
  /**
   * The idle and running-time clocks while a warning is out (the worker's reclaim loop writes it only then,
   * so a busy session costs no write): when the idle stretch began, when it pauses, which warnings (minutes
   * before) were sent for that deadline. Cleared by activity or a new run period (`period` = startedAt).
   */
  reclaim: z
    .object({
      period: Timestamp,
      idle: z
        .object({ since: Timestamp, deadline: Timestamp, warned: z.array(z.int().min(0).max(1440)).max(8) })
        .optional(),
      runtime: z.object({ deadline: Timestamp, warned: z.array(z.int().min(0).max(1440)).max(8) }).optional(),
    })
    .optional(),
  /**
   * A borrowed session chosen to give its GPUs back (docs/dev/fair-share.md): warned at `noticeAt`, paused
   * at `pauseAt` for the guaranteed session `for`. Kept after the pause: its resume goes ahead of new work.
   */
  capacityReclaim: z
    .object({
      noticeAt: Timestamp,
      pauseAt: Timestamp,
      for: z.string().max(128),
      reason: z.string().max(1024),
      pausedAt: Timestamp.optional(),
    })
    .optional(),
});
export type SessionStatus = z.infer<typeof SessionStatus>;

export const SessionKind = defineKind({
  kind: "Session",
  plural: "sessions",
  shortNames: ["ses"],
  namespaced: true,
  description: "An interactive GPU session (JupyterLab, terminal or code editor) of one user.",
  spec: SessionSpec,
  status: SessionStatus,
  printerColumns: [
    { name: "Owner", type: "string", jsonPath: ".spec.owner" },
    { name: "Phase", type: "string", jsonPath: ".status.phase" },
    { name: "Cluster", type: "string", jsonPath: ".status.cluster" },
    { name: "GPU Model", type: "string", jsonPath: ".status.gpuModel" },
    { name: "Desired", type: "string", jsonPath: ".spec.desiredState", priority: 1 },
    { name: "Node", type: "string", jsonPath: ".status.node", priority: 1 },
    { name: "Offering", type: "string", jsonPath: ".spec.offering", priority: 1 },
    { name: "Queue", type: "integer", jsonPath: ".status.queue.position", priority: 1 },
  ],
});
export const Session = SessionKind.schema;
export type Session = z.infer<typeof Session>;

/**
 * Phases the worker keeps off the resource (docs/dev/sessions.md, "Writes to the management cluster"): a
 * step between two states a person would name, recorded in the session's history row instead.
 */
export const INTERIM_PHASES: readonly SessionPhase[] = ["Starting", "Resuming", "Pausing", "Terminating"];

/** A status kept off the resource, and the resource's status it follows (`statusBasis` of it). */
export interface InterimStatus {
  status: SessionStatus;
  basis: string;
}

/**
 * What an interim status is checked against: the phase and conditions, which only the worker writes
 * (field by field, so that the order of a parsed or a stored object's keys does not matter).
 */
export function statusBasis(status: SessionStatus | undefined): string {
  const conditions = (status?.conditions ?? []).map((c) => [
    c.type,
    c.status,
    c.reason,
    c.message,
    c.lastTransitionTime,
    c.observedGeneration ?? null,
  ]);
  return JSON.stringify([status?.phase ?? null, conditions]);
}

/**
 * The session as it stands: the resource with its interim status, while that still follows the
 * resource's status (a status written since supersedes it). `status.reclaim`, which the API writes to
 * the resource, stays the resource's.
 */
export function withInterim(s: Session, interim: InterimStatus | null | undefined): Session {
  if (!interim || interim.basis !== statusBasis(s.status)) return s;
  const { reclaim: _kept, ...status } = interim.status;
  const reclaim = s.status?.reclaim;
  return { ...s, status: reclaim ? { ...status, reclaim } : status };
}

/** A Session's path on the management cluster's API (its list when `name` is absent; `/status` when asked). */
export function sessionPath(namespace: string, name?: string, subresource?: "status"): string {
  return resourcePath(SessionKind, {
    namespace,
    ...(name ? { name } : {}),
    ...(name && subresource ? { subresource } : {}),
  });
}
