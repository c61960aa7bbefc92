// A user's own bell: only ever their own notifications; another user's id is not found (never 403, so
// ids reveal nothing).
import type { Knex } from "knex";
import { countUnread, dismiss, inboxQuery, markAllRead, markRead } from "../../db/operations/notifications/inbox.ts";
import { disabledKinds, upsertPreferences } from "../../db/operations/notifications/preferences.ts";
import type { NotificationRow } from "../../db/operations/notifications/types.ts";
import { type Page, type PagedBody, paginate } from "../../db/paging.ts";
import { Invalid, NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { appliesTo, isCritical, NOTIFICATION_KIND_LIST, NOTIFICATION_KINDS, type NotificationKind } from "./kinds.ts";

interface D {
  db: Knex;
  clock: { now(): Date };
}

/** A page of the caller's own notifications, newest first, each as `present` makes it. */
export function inbox<Out>(
  deps: D,
  p: Principal,
  opts: { unreadOnly?: boolean; kind?: string },
  page: Page,
  present: (row: NotificationRow) => Out,
): Promise<PagedBody<Out>> {
  return paginate(deps.db, inboxQuery(deps.db, p.userId, opts), page, present);
}

export const unreadCount = (deps: D, p: Principal) => countUnread(deps.db, p.userId);

export async function readOne(deps: D, p: Principal, id: string): Promise<void> {
  if (!(await markRead(deps.db, p.userId, id, deps.clock.now()))) throw new NotFound("notification", id);
}

export const readAll = (deps: D, p: Principal) => markAllRead(deps.db, p.userId, deps.clock.now());

export async function dismissOne(deps: D, p: Principal, id: string): Promise<void> {
  if (!(await dismiss(deps.db, p.userId, id, deps.clock.now()))) throw new NotFound("notification", id);
}

export async function preferencesOf(deps: D, p: Principal) {
  const off = await disabledKinds(deps.db, p.userId);
  return NOTIFICATION_KIND_LIST.map((kind) => ({
    kind,
    enabled: isCritical(kind) || !off.has(kind),
    critical: isCritical(kind),
    audience: NOTIFICATION_KINDS[kind].audience,
    appliesToMe: appliesTo(kind, p),
    description: NOTIFICATION_KINDS[kind].description,
  }));
}

/** Sets preferences; turning a critical kind off is refused as a whole (nothing half-written). */
export async function setPreferences(
  deps: D,
  p: Principal,
  prefs: { kind: NotificationKind; enabled: boolean }[],
): Promise<void> {
  const issues = prefs.flatMap((x, i) =>
    !x.enabled && isCritical(x.kind)
      ? [
          {
            path: ["body", "preferences", i, "enabled"],
            message: `${x.kind} is critical and cannot be turned off`,
            code: "critical_kind",
          },
        ]
      : [],
  );
  if (issues.length > 0) throw new Invalid("critical notifications cannot be turned off", issues);
  await upsertPreferences(deps.db, p.userId, prefs, deps.clock.now());
}
