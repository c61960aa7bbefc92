// A user's own notifications: the list (not dismissed, newest first), the unread count, and marking.
// Every statement names the user: another user's notification is simply not found (BOLA).
import type { Knex } from "knex";

export function inboxQuery(db: Knex, userId: string, opts: { unreadOnly?: boolean; kind?: string }): Knex.QueryBuilder {
  const q = db("notifications").select("*").where({ user_id: userId }).whereNull("dismissed_at");
  if (opts.unreadOnly) q.whereNull("read_at");
  if (opts.kind) q.where({ kind: opts.kind });
  return q.orderBy([
    { column: "created_at", order: "desc" },
    { column: "id", order: "desc" },
  ]);
}

export async function countUnread(db: Knex, userId: string): Promise<number> {
  const r = (await db("notifications")
    .where({ user_id: userId })
    .whereNull("read_at")
    .whereNull("dismissed_at")
    .count({ n: "*" })
    .first()) as { n: string | number } | undefined;
  return Number(r?.n ?? 0);
}

/** Marks one as read; false when the user has no such notification. Reading twice keeps the first time. */
export async function markRead(db: Knex, userId: string, id: string, at: Date): Promise<boolean> {
  const n = await db("notifications")
    .where({ id, user_id: userId })
    .whereNull("dismissed_at")
    .update({
      read_at: db.raw("coalesce(read_at, ?)", [at]),
    });
  return n > 0;
}

export async function markAllRead(db: Knex, userId: string, at: Date): Promise<number> {
  return db("notifications")
    .where({ user_id: userId })
    .whereNull("read_at")
    .whereNull("dismissed_at")
    .update({ read_at: at });
}

export async function dismiss(db: Knex, userId: string, id: string, at: Date): Promise<boolean> {
  const n = await db("notifications")
    .where({ id, user_id: userId })
    .whereNull("dismissed_at")
    .update({ dismissed_at: at, read_at: db.raw("coalesce(read_at, ?)", [at]) });
  return n > 0;
}
