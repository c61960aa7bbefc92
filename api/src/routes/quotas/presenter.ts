import type { QuotaRequestRow } from "../../db/operations/quotas/types.ts";
import type { Principal } from "../../domain/identity/principal.ts";
import type { Effective } from "../../domain/quotas/effective.ts";
import { mayDecide } from "../../domain/quotas/requests.ts";
import type { QuotaRequest } from "./schemas.ts";

const iso = (d: Date) => new Date(d).toISOString();

export const presentQuotaRequest =
  (p: Principal) =>
  (r: QuotaRequestRow): QuotaRequest => ({
    id: r.id,
    organization_id: r.organization_id,
    project_id: r.project_id,
    scope: r.scope,
    requester_id: r.requester_id,
    requester_email: r.requester_email ?? null,
    asked: r.asked,
    current: r.current,
    reason: r.reason,
    status: r.status,
    granted: r.granted,
    policy: r.policy_name,
    decided_by: r.decided_by,
    decision_note: r.decision_note,
    created_at: iso(r.created_at),
    decided_at: r.decided_at ? iso(r.decided_at) : null,
    can_decide: r.status === "pending" && r.requester_id !== p.userId && mayDecide(p, r),
  });

export function presentEffective(e: Effective) {
  return {
    user_id: e.userId,
    organization_id: e.organizationId,
    project_id: e.projectId,
    limits: e.limits,
    allowed_offerings: e.allowedOfferings,
    idle: {
      timeout_minutes: e.idle.idleTimeoutMinutes,
      min_timeout_minutes: e.idle.minTimeoutMinutes,
      max_timeout_minutes: e.idle.maxTimeoutMinutes,
      gpu_utilization_percent: e.idle.gpuUtilizationPercent,
      keep_running_max: e.idle.keepRunningMax,
      max_runtime_minutes: e.idle.maxRuntimeMinutes,
    },
  };
}
