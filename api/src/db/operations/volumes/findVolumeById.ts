import type { Knex } from "knex";
import type { VolumeRow } from "./types.ts";

/** Live volumes only (deleted ones are history); `forUpdate` locks the row for the transaction. */
export async function findVolumeById(
  db: Knex,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<VolumeRow | undefined> {
  const q = db<VolumeRow>("volumes").where({ id }).whereNull("deleted_at").first();
  if (opts.forUpdate) q.forUpdate();
  return (await q) as VolumeRow | undefined;
}

/** A deleted volume (within or past its grace period). */
export async function findDeletedVolumeById(db: Knex, id: string): Promise<VolumeRow | undefined> {
  return (await db<VolumeRow>("volumes").where({ id }).whereNotNull("deleted_at").first()) as VolumeRow | undefined;
}
