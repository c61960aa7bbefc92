import type { z } from "zod";
import type { SessionView } from "../../db/operations/sessions/view.ts";
import { allowedActions } from "../../domain/sessions/actions.ts";
import type { Session } from "./schemas.ts";

/** What borrowing means for the person, on every borrowed session (docs/dev/fair-share.md). */
export const BORROWED_NOTICE =
  "Borrowed capacity: when a guaranteed session needs these GPUs, you are warned, and after the grace period the session is paused (volumes kept) and resumes ahead of new work when room returns.";

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);

export function presentSession(v: SessionView): z.input<typeof Session> {
  return {
    id: v.id,
    name: v.displayName,
    resource_name: v.crName,
    namespace: v.namespace,
    owner_id: v.ownerId,
    organization_id: v.organizationId,
    project_id: v.projectId,
    offering: v.offering,
    preset: v.preset,
    image: v.image,
    gpu_model: v.gpuModel,
    gpu_count: v.gpuCount,
    gpu_fraction: v.gpuFraction,
    gpu_slice_memory_mib: v.gpuSliceMemoryMib,
    gpu_mig_profile: v.gpuMigProfile,
    gpu_occupancy: v.gpuOccupancy,
    gpu_cards: v.gpuCards,
    hourly_credit_rate: v.hourlyCreditRate,
    cluster_pin: v.clusterPin,
    cluster_id: v.clusterId,
    node: v.node,
    phase: v.phase as z.input<typeof Session>["phase"],
    desired_state: v.desiredState as z.input<typeof Session>["desired_state"],
    priority: v.priority,
    queue: v.queue,
    reason: v.reason,
    message: v.message,
    ...(v.conditions
      ? {
          conditions: v.conditions.map((c) => ({
            type: c.type,
            status: c.status,
            reason: c.reason,
            message: c.message,
            last_transition_time: c.lastTransitionTime,
          })),
        }
      : {}),
    connect_paths: v.connectPaths,
    restarts: v.restarts,
    allowed_actions: v.resourceDeleted ? [] : allowedActions(v.phase, v.desiredState),
    created_at: iso(v.createdAt) as string,
    updated_at: iso(v.updatedAt) as string,
    queued_at: iso(v.queuedAt),
    scheduled_at: iso(v.scheduledAt),
    started_at: iso(v.startedAt),
    paused_at: iso(v.pausedAt),
    terminated_at: iso(v.terminatedAt),
    idle_warning: v.idleWarning
      ? { since: v.idleWarning.since.toISOString(), deadline: v.idleWarning.deadline.toISOString() }
      : null,
    runtime_warning: v.runtimeWarning ? { deadline: v.runtimeWarning.deadline.toISOString() } : null,
    capacity_class: v.capacityClass,
    rate_multiplier: v.ratePermille / 1000,
    reclaim_notice:
      v.capacityClass === "borrowed"
        ? {
            message: BORROWED_NOTICE,
            pending: v.capacityReclaim
              ? {
                  notice_at: v.capacityReclaim.noticeAt.toISOString(),
                  pause_at: v.capacityReclaim.pauseAt.toISOString(),
                  for_session_id: v.capacityReclaim.forSessionId,
                  reason: v.capacityReclaim.reason,
                  paused_at: iso(v.capacityReclaim.pausedAt),
                }
              : null,
          }
        : null,
  };
}
