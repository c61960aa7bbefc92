// The kinds of notification Berth writes, each with its severity. Critical kinds cannot be turned off in
// a user's preferences: they say something stopped or money ran out.
export const NOTIFICATION_KINDS = {
  "credits.running_low": { severity: "warning", critical: false, description: "A session's credits run out soon." },
  "session.paused": {
    severity: "warning",
    critical: true,
    description:
      "A session was paused; data.reason says why: credits, member_removed, administrator, idle or time_limit.",
  },
  "session.idle_warning": {
    severity: "warning",
    critical: true,
    description: "A session has been idle and will be paused soon unless it is used or kept running.",
  },
  "session.runtime_warning": {
    severity: "warning",
    critical: true,
    description: "A session reaches its maximum running time soon and will be paused.",
  },
  "session.failed": { severity: "critical", critical: true, description: "A session failed." },
  "credits.request_approved": { severity: "info", critical: false, description: "A credit request was approved." },
  "credits.request_partially_approved": {
    severity: "info",
    critical: false,
    description: "A credit request was approved in part.",
  },
  "credits.request_denied": { severity: "info", critical: false, description: "A credit request was denied." },
  "quota.request_received": {
    severity: "info",
    critical: false,
    description: "A member asked for higher limits, and you may decide (administrators).",
  },
  "quota.request_decided": { severity: "info", critical: false, description: "A quota-increase request was decided." },
  "volume.near_quota": { severity: "warning", critical: false, description: "A volume is close to its quota." },
  "image_build.finished": {
    severity: "info",
    critical: false,
    description: "One of your image builds ended: succeeded, failed or cancelled.",
  },
  "image_import.finished": {
    severity: "info",
    critical: false,
    description: "One of your image imports ended: ready or failed.",
  },
  "webhook.endpoint_disabled": {
    severity: "warning",
    critical: true,
    description: "A webhook endpoint of your organization was disabled after failing.",
  },
  "cluster.unreachable": {
    severity: "critical",
    critical: true,
    description: "A cluster stopped answering (administrators).",
  },
} as const satisfies Record<
  string,
  { severity: "info" | "warning" | "critical"; critical: boolean; description: string }
>;

export type NotificationKind = keyof typeof NOTIFICATION_KINDS;
export const NOTIFICATION_KIND_LIST = Object.keys(NOTIFICATION_KINDS) as NotificationKind[];
export type Severity = (typeof NOTIFICATION_KINDS)[NotificationKind]["severity"];

export function isCritical(kind: NotificationKind): boolean {
  return NOTIFICATION_KINDS[kind].critical;
}
