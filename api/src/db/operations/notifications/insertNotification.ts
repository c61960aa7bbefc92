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
 * Inserts notifications in one statement; with a dedupe key, not one while the user still has an open
 * (unread, not dismissed) one with that key (the partial unique index notifications_open_dedupe decides,
 * so two writers at once cannot both insert). Returns the rows written (deduplicated ones are left out).
 */
export async function insertNotifications(db: Knex, ns: readonly NotificationInsert[]): Promise<NotificationRow[]> {
  if (ns.length === 0) return [];
  const col = <T>(f: (n: NotificationInsert) => T) => ns.map(f) as unknown as string[];
  const r = await db.raw(
    `INSERT INTO notifications (user_id, organization_id, kind, severity, title, body, data, dedupe_key, created_at)
     SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::jsonb[], ?::text[], ?::timestamptz[])
     ON CONFLICT (user_id, dedupe_key) WHERE dedupe_key IS NOT NULL AND read_at IS NULL AND dismissed_at IS NULL
     DO NOTHING RETURNING *`,
    [
      col((n) => n.user_id),
      col((n) => n.organization_id),
      col((n) => n.kind),
      col((n) => n.severity),
      col((n) => n.title),
      col((n) => n.body),
      col((n) => JSON.stringify(n.data)),
      col((n) => n.dedupe_key),
      col((n) => n.created_at),
    ],
  );
  return r.rows as NotificationRow[];
}
