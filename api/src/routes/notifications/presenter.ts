import type { NotificationRow } from "../../db/operations/notifications/types.ts";
import type { preferencesOf } from "../../domain/notifications/inbox.ts";
import { isoTimestamp } from "../../http/timestamp.ts";
import type { Notification } from "./schemas.ts";

export function presentNotification(r: NotificationRow): Notification {
  return {
    id: String(r.id),
    kind: r.kind,
    severity: r.severity,
    title: r.title,
    body: r.body,
    data: r.data ?? {},
    organization_id: r.organization_id,
    created_at: isoTimestamp(new Date(r.created_at)),
    read_at: r.read_at ? isoTimestamp(new Date(r.read_at)) : null,
  };
}

export function presentPreference(p: Awaited<ReturnType<typeof preferencesOf>>[number]) {
  return {
    kind: p.kind,
    enabled: p.enabled,
    critical: p.critical,
    audience: p.audience,
    applies_to_me: p.appliesToMe,
    description: p.description,
  };
}
