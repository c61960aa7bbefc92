import type { Knex } from "knex";
import type { VolumeRow } from "./types.ts";

export async function updateVolume(
  db: Knex,
  id: string,
  patch: Partial<Pick<VolumeRow, "name" | "size_gb" | "deleted_at">> & { updated_at: Date },
): Promise<VolumeRow | undefined> {
  const [row] = await db<VolumeRow>("volumes").where({ id }).update(patch).returning("*");
  return row as VolumeRow | undefined;
}

/** Removes a row whose resource could not be created: the create left nothing behind. */
export async function deleteVolumeRow(db: Knex, id: string): Promise<void> {
  await db("volumes").where({ id }).delete();
}
