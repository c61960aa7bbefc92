// The limits of a ResourcePolicy by their REST names (snake_case), which of them a member may ask to
// raise, and for whom: a person's own limits (scope `user`) or a project's shared ones (scope `project`).
// Organization-wide limits and maxPriority are not requested: an organization's administrators set
// them directly (PATCH /api/v1/resource-policies/{name}). Two idle settings are limits too: the longest idle
// timeout a session may ask for and the keep-runnings per run period; they live in `spec.idle`
// (IDLE_LIMIT_NAMES), and where no policy sets them the built-in default is the limit.
import type { ResourcePolicySpec } from "@berth/crds";

type SpecLimit = keyof NonNullable<ResourcePolicySpec["limits"]>;
type SpecIdle = keyof NonNullable<ResourcePolicySpec["idle"]>;

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

export const IDLE_LIMIT_NAMES = {
  max_idle_timeout_minutes: "maxTimeoutMinutes",
  keep_running_max: "keepRunningMax",
} as const satisfies Record<string, SpecIdle>;
export type IdleLimitName = keyof typeof IDLE_LIMIT_NAMES;

export type LimitName = keyof typeof LIMIT_NAMES | IdleLimitName;
export const ALL_LIMITS = [...Object.keys(LIMIT_NAMES), ...Object.keys(IDLE_LIMIT_NAMES)] as LimitName[];

export function isIdleLimit(name: LimitName): name is IdleLimitName {
  return name in IDLE_LIMIT_NAMES;
}

/** The most a request may ask for, where the resource's schema bounds it (crds' ResourcePolicy idle). */
export const LIMIT_CEILINGS: Partial<Record<LimitName, number>> = {
  max_idle_timeout_minutes: 10_080,
  keep_running_max: 100,
};

export type RequestScope = "user" | "project";

export const REQUESTABLE: Record<RequestScope, readonly LimitName[]> = {
  user: [
    "max_gpus_per_user",
    "max_concurrent_sessions_per_user",
    "max_volume_gb_per_user",
    "max_session_hours",
    "max_idle_timeout_minutes",
    "keep_running_max",
  ],
  project: ["max_gpus_per_project", "max_volume_gb_per_project"],
};

export const REQUESTABLE_LIMITS = [...REQUESTABLE.user, ...REQUESTABLE.project] as const;

export function requestScopeOf(name: LimitName): RequestScope | null {
  if (REQUESTABLE.user.includes(name)) return "user";
  if (REQUESTABLE.project.includes(name)) return "project";
  return null;
}
