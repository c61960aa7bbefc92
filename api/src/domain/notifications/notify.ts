// Writing notifications (the bell): every producer (billing, credit requests, …) calls notify() inside
// the transaction of the change it reports, so there is no notification without its change. Each one
// written is also a `notification.created` event on the session event stream (its user only; see
// routes/sessions/stream.ts), so the console's bell updates without polling. A dedupe key keeps a
// streak to one notification: while the user has an open one with the key, another is not written.
// A kind the user turned off is not written, unless it is critical (kinds.ts).
import type { Knex } from "knex";
import { insertNotifications } from "../../db/operations/notifications/insertNotification.ts";
import { disabledKindsOf } from "../../db/operations/notifications/preferences.ts";
import type { NotificationRow } from "../../db/operations/notifications/types.ts";
import { insertSessionEvents } from "../../db/operations/sessions/sessionEvents.ts";
import { isCritical, NOTIFICATION_KINDS, type NotificationKind } from "./kinds.ts";

export const NOTIFICATION_CREATED = "notification.created";

export interface NewNotification {
  userId: string;
  organizationId: string | null;
  kind: NotificationKind;
  title: string;
  body: string;
  data?: Record<string, unknown>;
  /** One open notification per user and key (e.g. `credits.running_low:<session>`). */
  dedupeKey?: string;
  at: Date;
}

/** Writes the notifications; returns those written (deduplicated and turned-off ones are left out). */
export async function notify(db: Knex, ns: NewNotification | NewNotification[]): Promise<NotificationRow[]> {
  const list = Array.isArray(ns) ? ns : [ns];
  const off = await disabledKindsOf(
    db,
    list.filter((n) => !isCritical(n.kind)).map((n) => n.userId),
  );
  const written = await insertNotifications(
    db,
    list
      .filter((n) => isCritical(n.kind) || !off.get(n.userId)?.has(n.kind))
      .map((n) => ({
        user_id: n.userId,
        organization_id: n.organizationId,
        kind: n.kind,
        severity: NOTIFICATION_KINDS[n.kind].severity,
        title: n.title,
        body: n.body,
        data: n.data ?? {},
        dedupe_key: n.dedupeKey ?? null,
        created_at: n.at,
      })),
  );
  await insertSessionEvents(
    db,
    written.map((r) => ({
      session_id: null,
      owner_id: r.user_id,
      organization_id: null,
      project_id: null,
      type: NOTIFICATION_CREATED,
      payload: { notification: JSON.parse(JSON.stringify(r)) as Record<string, unknown> },
    })),
  );
  return written;
}
