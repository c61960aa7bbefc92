// The limits of a ResourcePolicy by their REST names (snake_case), which of them a member may ask to
// raise, and for whom: a person's own limits (scope `user`) or a project's shared ones (scope `project`).
// Organization-wide limits and maxPriority are not requested: an organization's administrators set
// them directly (PATCH /api/v1/resource-policies/{name}).
import type { ResourcePolicySpec } from "@berth/crds";

type SpecLimit = keyof NonNullable<ResourcePolicySpec["limits"]>;

export const LIMIT_NAMES = {
  max_gpus_per_user: "maxGpusPerUser",
  max_concurrent_sessions_per_user: "maxConcurrentSessionsPerUser",
  max_volume_gb_per_user: "maxVolumeGbPerUser",
  max_session_hours: "maxSessionHours",
  max_gpus_per_project: "maxGpusPerProject",
  max_volume_gb_per_project: "maxVolumeGbPerProject",
  max_gpus_per_organization: "maxGpusPerOrganization",
  max_priority: "maxPriority",
} as const satisfies Record<string, SpecLimit>;
export type LimitName = keyof typeof LIMIT_NAMES;
export const ALL_LIMITS = Object.keys(LIMIT_NAMES) as LimitName[];

export type RequestScope = "user" | "project";

export const REQUESTABLE: Record<RequestScope, readonly LimitName[]> = {
  user: ["max_gpus_per_user", "max_concurrent_sessions_per_user", "max_volume_gb_per_user", "max_session_hours"],
  project: ["max_gpus_per_project", "max_volume_gb_per_project"],
};

export const REQUESTABLE_LIMITS = [...REQUESTABLE.user, ...REQUESTABLE.project] as const;

export function requestScopeOf(name: LimitName): RequestScope | null {
  if (REQUESTABLE.user.includes(name)) return "user";
  if (REQUESTABLE.project.includes(name)) return "project";
  return null;
}
