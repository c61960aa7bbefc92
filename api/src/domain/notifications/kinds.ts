// The kinds of notification Berth writes, each with its severity and audience. Critical kinds cannot be
// turned off in a user's preferences: they say something stopped or money ran out. The audience is who
// the producers write a kind to (so the settings page lists only what a person can receive):
// `everyone`; `administrators` (organization or project administrators: quota requests go to the
// deciders, db/operations/quotas/listDeciders.ts); `organization_administrators` (webhooks are an
// organization's); `super_admins` (clusters, api/src/worker/clusterHealthLoop.ts).
import type { Principal } from "../identity/principal.ts";

export const AUDIENCES = ["everyone", "administrators", "organization_administrators", "super_admins"] as const;
export type Audience = (typeof AUDIENCES)[number];

export const NOTIFICATION_KINDS = {
  "credits.running_low": {
    severity: "warning",
    critical: false,
    audience: "everyone",
    description: "A session's credits run out soon.",
  },
  "session.paused": {
    severity: "warning",
    critical: true,
    audience: "everyone",
    description:
      "A session was paused; data.reason says why: credits, member_removed, administrator, idle, time_limit or capacity_reclaimed.",
  },
  "session.idle_warning": {
    severity: "warning",
    critical: true,
    audience: "everyone",
    description: "A session has been idle and will be paused soon unless it is used or kept running.",
  },
  "session.reclaim_warning": {
    severity: "warning",
    critical: true,
    audience: "everyone",
    description:
      "A borrowed session will be paused after its grace period: a guaranteed session needs its GPUs (docs/dev/fair-share.md).",
  },
  "session.resume_refused": {
    severity: "warning",
    critical: true,
    audience: "everyone",
    description:
      "The system could not resume a paused session (a reclaimed borrowed one): the same check as a person's resume refused it, and data.refusal says why (credits, a limit). It stays paused.",
  },
  "session.runtime_warning": {
    severity: "warning",
    critical: true,
    audience: "everyone",
    description: "A session reaches its maximum running time soon and will be paused.",
  },
  "session.failed": { severity: "critical", critical: true, audience: "everyone", description: "A session failed." },
  "session.node_pool_revoked": {
    severity: "warning",
    critical: false,
    audience: "everyone",
    description:
      "A running session's node pool is no longer granted to its organization or project; it is placed elsewhere next time.",
  },
  "session.node_fault": {
    severity: "warning",
    critical: true,
    audience: "everyone",
    description:
      "A session's node was cordoned for hardware faults; data.action says whether the session is being placed again elsewhere.",
  },
  "node.fault_cordoned": {
    severity: "critical",
    critical: true,
    audience: "super_admins",
    description: "A node was cordoned because its GPUs reported hardware faults (XID or ECC errors) past the rule.",
  },
  "credits.request_approved": {
    severity: "info",
    critical: false,
    audience: "everyone",
    description: "A credit request was approved.",
  },
  "credits.request_partially_approved": {
    severity: "info",
    critical: false,
    audience: "everyone",
    description: "A credit request was approved in part.",
  },
  "credits.request_denied": {
    severity: "info",
    critical: false,
    audience: "everyone",
    description: "A credit request was denied.",
  },
  "quota.request_received": {
    severity: "info",
    critical: false,
    audience: "administrators",
    description: "A member asked for higher limits, and you may decide (administrators).",
  },
  "quota.request_decided": {
    severity: "info",
    critical: false,
    audience: "everyone",
    description: "A quota-increase request was decided.",
  },
  "volume.near_quota": {
    severity: "warning",
    critical: false,
    audience: "everyone",
    description: "A volume is close to its quota.",
  },
  "image_build.finished": {
    severity: "info",
    critical: false,
    audience: "everyone",
    description: "One of your image builds ended: succeeded, failed or cancelled.",
  },
  "image_import.finished": {
    severity: "info",
    critical: false,
    audience: "everyone",
    description: "One of your image imports ended: ready or failed.",
  },
  "webhook.endpoint_disabled": {
    severity: "warning",
    critical: true,
    audience: "organization_administrators",
    description: "A webhook endpoint of your organization was disabled after failing.",
  },
  "account.created": {
    severity: "info",
    critical: false,
    audience: "everyone",
    description: "An administrator made your account (an import); the first sign-in asks for a password of your own.",
  },
  "membership.added": {
    severity: "info",
    critical: false,
    audience: "everyone",
    description: "An administrator added you to an organization or project (an import).",
  },
  "credits.welcome_unpaid": {
    severity: "warning",
    critical: false,
    audience: "organization_administrators",
    description: "A new member's welcome credit was not paid: the organization's wallet could not cover it.",
  },
  "cluster.unreachable": {
    severity: "critical",
    critical: true,
    audience: "super_admins",
    description: "A cluster stopped answering (administrators).",
  },
} as const satisfies Record<
  string,
  { severity: "info" | "warning" | "critical"; critical: boolean; audience: Audience; description: string }
>;

export type NotificationKind = keyof typeof NOTIFICATION_KINDS;
export const NOTIFICATION_KIND_LIST = Object.keys(NOTIFICATION_KINDS) as NotificationKind[];
export type Severity = (typeof NOTIFICATION_KINDS)[NotificationKind]["severity"];

export function isCritical(kind: NotificationKind): boolean {
  return NOTIFICATION_KINDS[kind].critical;
}

/** Whether a person can receive a kind at all, from their roles as the producers choose recipients. */
export function appliesTo(kind: NotificationKind, p: Principal): boolean {
  switch (NOTIFICATION_KINDS[kind].audience) {
    case "everyone":
      return true;
    case "administrators":
      return p.memberships.some(
        (m) => (m.role === "org_admin" && !m.projectId) || (m.role === "project_admin" && m.projectId),
      );
    case "organization_administrators":
      return p.memberships.some((m) => m.role === "org_admin" && !m.projectId);
    case "super_admins":
      return p.isSuperAdmin;
  }
}
