import { z } from "zod";
import { Page, Pagination } from "../../db/paging.ts";
import { AUDIENCES, NOTIFICATION_KIND_LIST } from "../../domain/notifications/kinds.ts";

const Timestamp = z.string().meta({ description: "RFC 3339, UTC." });

export const NotificationKind = z
  .enum(NOTIFICATION_KIND_LIST as [string, ...string[]])
  .meta({ id: "NotificationKind" });

export const Notification = z
  .object({
    id: z.string(),
    kind: z.string().meta({ description: "See NotificationKind." }),
    severity: z.enum(["info", "warning", "critical"]),
    title: z.string(),
    body: z.string(),
    data: z.record(z.string(), z.unknown()).meta({ description: "Ids a client links to (session_id, request_id, …)." }),
    organization_id: z.string().nullable(),
    created_at: Timestamp,
    read_at: Timestamp.nullable(),
  })
  .meta({ id: "Notification" });
export type Notification = z.infer<typeof Notification>;

export const ListNotificationsQuery = Page.extend({
  unread: z.enum(["true", "false"]).optional().meta({ description: "true: only unread ones." }),
  kind: NotificationKind.optional(),
}).strict();

export const NotificationList = z
  .object({
    data: z.array(Notification),
    pagination: Pagination,
    unread_count: z.number().int().meta({ description: "Unread and not dismissed, over all pages." }),
  })
  .meta({ id: "NotificationList" });

export const NotificationParams = z.object({
  notificationId: z.string().regex(/^\d{1,18}$/, "a notification id (digits)"),
});

export const MarkedAll = z.object({ marked: z.number().int(), unread_count: z.number().int() });

export const NotificationPreference = z.object({
  kind: NotificationKind,
  enabled: z.boolean(),
  critical: z.boolean().meta({ description: "Critical kinds are always delivered; they cannot be turned off." }),
  audience: z.enum(AUDIENCES).meta({
    description:
      "Who Berth writes this kind to: everyone, administrators (of an organization or a project), organization_administrators or super_admins.",
  }),
  applies_to_me: z.boolean().meta({
    description:
      "Whether the caller can receive this kind with the roles they hold now (the settings page lists only these).",
  }),
  description: z.string(),
});
export const NotificationPreferences = z
  .object({ data: z.array(NotificationPreference) })
  .meta({ id: "NotificationPreferences" });

export const UpdatePreferencesBody = z
  .object({
    preferences: z
      .array(z.object({ kind: NotificationKind, enabled: z.boolean() }).strict())
      .min(1)
      .max(NOTIFICATION_KIND_LIST.length)
      // One entry per kind: two would say two things of one kind, and neither is the caller's answer.
      .superRefine((prefs, ctx) => {
        const first = new Map<string, number>();
        for (const [i, p] of prefs.entries()) {
          const at = first.get(p.kind);
          if (at === undefined) first.set(p.kind, i);
          else
            ctx.addIssue({
              code: "custom",
              path: [i, "kind"],
              message: `${p.kind} is named twice (also at preferences[${at}]): give each kind once`,
              params: { code: "duplicate_kind" },
            });
        }
      }),
  })
  .strict();
