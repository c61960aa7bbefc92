import type { Knex } from "knex";

/** The kinds this user turned off. */
export async function disabledKinds(db: Knex, userId: string): Promise<Set<string>> {
  return (await disabledKindsOf(db, [userId])).get(userId) ?? new Set();
}

/** The kinds each of these users turned off, in one query (users with none are left out). */
export async function disabledKindsOf(db: Knex, userIds: readonly string[]): Promise<Map<string, Set<string>>> {
  const off = new Map<string, Set<string>>();
  if (userIds.length === 0) return off;
  const rows = (await db("notification_preferences")
    .whereIn("user_id", [...new Set(userIds)])
    .where({ enabled: false })
    .select("user_id", "kind")) as { user_id: string; kind: string }[];
  for (const r of rows) off.set(r.user_id, (off.get(r.user_id) ?? new Set()).add(r.kind));
  return off;
}

export async function upsertPreferences(
  db: Knex,
  userId: string,
  prefs: { kind: string; enabled: boolean }[],
  at: Date,
): Promise<void> {
  if (prefs.length === 0) return;
  // One row per kind (the last word wins): Postgres refuses an upsert that touches a row twice.
  const byKind = new Map(prefs.map((p) => [p.kind, p.enabled]));
  await db("notification_preferences")
    .insert([...byKind].map(([kind, enabled]) => ({ user_id: userId, kind, enabled, updated_at: at })))
    .onConflict(["user_id", "kind"])
    .merge(["enabled", "updated_at"]);
}
