import type { Knex } from "knex";
import type { NotificationRow } from "./types.ts";

export interface NotificationInsert {
  user_id: string;
  organization_id: string | null;
  kind: string;
  severity: string;
  title: string;
  body: string;
  data: Record<string, unknown>;
  dedupe_key: string | null;
  created_at: Date;
}

/**
 * Inserts one notification; with a dedupe key, nothing when the user still has an open (unread, not
 * dismissed) one with that key (the partial unique index notifications_open_dedupe decides, so two
 * writers at once cannot both insert). Returns the row, or undefined when deduplicated.
 */
export async function insertNotification(db: Knex, n: NotificationInsert): Promise<NotificationRow | undefined> {
  const r = await db.raw(
    `INSERT INTO notifications (user_id, organization_id, kind, severity, title, body, data, dedupe_key, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?)
     ON CONFLICT (user_id, dedupe_key) WHERE dedupe_key IS NOT NULL AND read_at IS NULL AND dismissed_at IS NULL
     DO NOTHING RETURNING *`,
    [
      n.user_id,
      n.organization_id,
      n.kind,
      n.severity,
      n.title,
      n.body,
      JSON.stringify(n.data),
      n.dedupe_key,
      n.created_at,
    ],
  );
  return (r.rows as NotificationRow[])[0];
}
