import type { Knex } from "knex";

/** The kinds this user turned off. */
export async function disabledKinds(db: Knex, userId: string): Promise<Set<string>> {
  const rows = (await db("notification_preferences").where({ user_id: userId, enabled: false }).select("kind")) as {
    kind: string;
  }[];
  return new Set(rows.map((r) => r.kind));
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
