// Test ids of the idle and time limits page (resource policies, read-only but for super_admins).
export const IDLE_LIMITS_TEST_IDS = {
  /** A policy's card, by its name (global, …). */
  policy: (name: string) => `policy-${name}`,
  /** A policy's field (timeout_minutes, min_timeout_minutes, max_session_hours, …). */
  field: (policy: string, field: string) => `${policy}-${field}`,
  save: (policy: string) => `${policy}-save`,
  readOnly: "read-only",
} as const;
