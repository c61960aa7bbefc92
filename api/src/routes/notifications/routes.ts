// The notification bell (docs/dev/governance.md): the caller's own notifications only. New ones are
import { z } from "zod";
import {
  dismissOne,
  inbox,
  preferencesOf,
  readAll,
  readOne,
  setPreferences,
  unreadCount,
} from "../../domain/notifications/inbox.ts";
import type { NotificationKind } from "../../domain/notifications/kinds.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentNotification, presentPreference } from "./presenter.ts";
import {
  ListNotificationsQuery,
  MarkedAll,
  NotificationList,
  NotificationParams,
  NotificationPreferences,
  UpdatePreferencesBody,
} from "./schemas.ts";

export const listNotificationsRoute = defineRoute({
  method: "get",
  path: "/api/v1/notifications",
  operationId: "listNotifications",
  tags: ["notifications"],
  summary: "Your notifications, newest first, with the unread count",
  description:
    "Only your own (every role, super_admin included). Dismissed ones are left out; they and all others are kept 90 days. New ones also arrive live on GET /api/v1/sessions/events as `notification.created`.",
  auth: "user",
  query: ListNotificationsQuery,
  responses: { 200: NotificationList },
  handler: async ({ deps, principal, query }) => {
    const page = await inbox(
      deps,
      principal,
      { unreadOnly: query.unread === "true", ...(query.kind ? { kind: query.kind } : {}) },
      query,
      presentNotification,
    );
    return { status: 200, body: { ...page, unread_count: await unreadCount(deps, principal) } };
  },
});

export const readNotificationRoute = defineRoute({
  method: "post",
  path: "/api/v1/notifications/:notificationId/read",
  operationId: "readNotification",
  tags: ["notifications"],
  summary: "Mark one notification read",
  description: "Another user's notification is 404 not_found.",
  auth: "user",
  params: NotificationParams,
  audit: "notification.read",
  responses: { 204: z.null() },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("notification", params.notificationId);
    await readOne(deps, principal, params.notificationId);
    return { status: 204, body: null };
  },
});

export const readAllNotificationsRoute = defineRoute({
  method: "post",
  path: "/api/v1/notifications/read-all",
  operationId: "readAllNotifications",
  tags: ["notifications"],
  summary: "Mark all your notifications read",
  auth: "user",
  audit: "notification.read_all",
  responses: { 200: MarkedAll },
  handler: async ({ deps, principal }) => {
    const marked = await readAll(deps, principal);
    return { status: 200, body: { marked, unread_count: await unreadCount(deps, principal) } };
  },
});

export const dismissNotificationRoute = defineRoute({
  method: "post",
  path: "/api/v1/notifications/:notificationId/dismiss",
  operationId: "dismissNotification",
  tags: ["notifications"],
  summary: "Dismiss one notification (it leaves the bell)",
  description: "Another user's notification, or one already dismissed, is 404 not_found.",
  auth: "user",
  params: NotificationParams,
  audit: "notification.dismiss",
  responses: { 204: z.null() },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("notification", params.notificationId);
    await dismissOne(deps, principal, params.notificationId);
    return { status: 204, body: null };
  },
});

export const getPreferencesRoute = defineRoute({
  method: "get",
  path: "/api/v1/notifications/preferences",
  operationId: "getNotificationPreferences",
  tags: ["notifications"],
  summary: "Which kinds of notification you receive",
  description:
    "Every kind with its setting, its audience and whether it applies to you (applies_to_me: your roles let Berth write it to you).",
  auth: "user",
  responses: { 200: NotificationPreferences },
  handler: async ({ deps, principal }) => ({
    status: 200,
    body: { data: (await preferencesOf(deps, principal)).map(presentPreference) },
  }),
});

export const updatePreferencesRoute = defineRoute({
  method: "patch",
  path: "/api/v1/notifications/preferences",
  operationId: "updateNotificationPreferences",
  tags: ["notifications"],
  summary: "Turn kinds of notification on or off",
  description:
    "Kinds not named keep their setting. Turning off a critical kind is 400 validation_failed (issue code critical_kind) and changes nothing.",
  auth: "user",
  body: UpdatePreferencesBody,
  audit: "notification.preferences.update",
  responses: { 200: NotificationPreferences },
  handler: async ({ deps, principal, body }) => {
    await setPreferences(
      deps,
      principal,
      body.preferences.map((p) => ({ kind: p.kind as NotificationKind, enabled: p.enabled })),
    );
    return { status: 200, body: { data: (await preferencesOf(deps, principal)).map(presentPreference) } };
  },
});

export const routes: RouteDef[] = [
  listNotificationsRoute,
  readAllNotificationsRoute,
  readNotificationRoute,
  dismissNotificationRoute,
  getPreferencesRoute,
  updatePreferencesRoute,
];
