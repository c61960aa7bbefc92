import type { Knex } from "knex";

export interface SettingRow {
  key: string;
  value: unknown;
  updated_by: string | null;
  updated_at: Date;
}

export async function readSettings(db: Knex, keys?: readonly string[]): Promise<SettingRow[]> {
  const q = db("system_settings").select("*");
  if (keys) q.whereIn("key", keys as string[]);
  return (await q) as SettingRow[];
}

/** Locks the rows of these keys (those that exist) for the caller's transaction. */
export async function lockSettings(db: Knex, keys: readonly string[]): Promise<SettingRow[]> {
  return (await db("system_settings")
    .whereIn("key", keys as string[])
    .forUpdate()) as SettingRow[];
}

export async function writeSetting(db: Knex, key: string, value: unknown, by: string | null, at: Date): Promise<void> {
  await db("system_settings")
    .insert({ key, value: JSON.stringify(value), updated_by: by, updated_at: at })
    .onConflict("key")
    .merge(["value", "updated_by", "updated_at"]);
}
