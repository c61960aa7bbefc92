// What the system tells a session's owner when it is about to pause their session (idle, time limit,
// borrowed capacity reclaimed) and when it has: the bell and the session's event stream for a warning, the
// bell and the audit log for a pause. Written in the caller's transaction, so they land together or not at
// all. Callers: api/src/domain/reclaim/watch.ts and api/src/domain/fairshare/reclaimPass.ts.
import type { Knex } from "knex";
import { insertAuditRecord } from "../../db/operations/audit/insertAuditRecord.ts";
import { insertSessionEvents } from "../../db/operations/sessions/sessionEvents.ts";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import type { NotificationKind } from "../notifications/kinds.ts";
import { notify } from "../notifications/notify.ts";

type Owned = Pick<SessionRow, "id" | "owner_id" | "organization_id" | "project_id">;

export interface OwnerWarning {
  /** The notification's kind, also the stream event's type. */
  kind: NotificationKind & `session.${string}_warning`;
  title: string;
  body: string;
  data: Record<string, unknown>;
  /** One open notification per warning (the same pass run twice warns once). */
  dedupeKey: string;
  /** The session as the stream shows it, and the warning's fields the console reads. */
  view: Record<string, unknown>;
  warning: Record<string, unknown>;
}

export async function warnOwner(tx: Knex, row: Owned, w: OwnerWarning, at: Date): Promise<void> {
  await notify(tx, {
    userId: row.owner_id,
    organizationId: row.organization_id,
    kind: w.kind,
    title: w.title,
    body: w.body,
    data: w.data,
    dedupeKey: w.dedupeKey,
    at,
  });
  await insertSessionEvents(tx, [
    {
      session_id: row.id,
      owner_id: row.owner_id,
      organization_id: row.organization_id,
      project_id: row.project_id,
      type: w.kind,
      payload: { view: w.view, warning: w.warning },
    },
  ]);
}

export interface SystemPause {
  title: string;
  body: string;
  data: Record<string, unknown>;
  /** Who decided, as the audit log names it (`system:reclaim`, `system:fair-share`). */
  actorId: string;
  actorReason: string;
  requestId: string;
  details: Record<string, unknown>;
}

export async function tellOwnerPaused(tx: Knex, row: Owned, p: SystemPause, at: Date): Promise<void> {
  await notify(tx, {
    userId: row.owner_id,
    organizationId: row.organization_id,
    kind: "session.paused",
    title: p.title,
    body: p.body,
    data: p.data,
    dedupeKey: `session.paused:${row.id}:${at.toISOString()}`,
    at,
  });
  await insertAuditRecord(tx, {
    action: "session.pause",
    actorKind: "system",
    actorId: p.actorId,
    actorReason: p.actorReason,
    organizationId: row.organization_id,
    targetKind: "session",
    targetId: row.id,
    requestId: p.requestId,
    outcome: "success",
    status: 200,
    details: p.details,
    at,
  });
}
