import type { Knex } from "knex";
import { readSettings, writeSetting } from "../settings/systemSettings.ts";

/** Storage's fleet-wide settings: one row (`storage`) of system_settings; the storage domain checks it. */
export async function readStorageSettings(db: Knex): Promise<Record<string, unknown> | undefined> {
  const [row] = await readSettings(db, ["storage"]);
  return (row?.value as Record<string, unknown> | undefined) ?? undefined;
}

export async function writeStorageSettings(db: Knex, value: unknown, by: string, at: Date): Promise<void> {
  await writeSetting(db, "storage", value, by, at);
}
