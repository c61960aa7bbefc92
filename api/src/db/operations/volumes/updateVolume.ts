import type { Knex } from "knex";
import type { VolumeRow } from "./types.ts";

/** A size change is also recorded from `updated_at` on (storage is billed at each size for its own time). */
export async function updateVolume(
  db: Knex,
  id: string,
  patch: Partial<Pick<VolumeRow, "name" | "size_gb" | "deleted_at" | "purge_after">> & {
    updated_at: Date;
  },
): Promise<VolumeRow | undefined> {
  const [row] = await db<VolumeRow>("volumes").where({ id }).update(patch).returning("*");
  if (row && patch.size_gb !== undefined)
    await db("volume_sizes")
      .insert({ volume_id: id, from_at: patch.updated_at, size_gb: patch.size_gb })
      .onConflict(["volume_id", "from_at"])
      .merge(["size_gb"]);
  return row as VolumeRow | undefined;
}

/** Removes a row whose resource could not be created: the create left nothing behind. */
export async function deleteVolumeRow(db: Knex, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx("billing_volumes").where({ volume_id: id }).delete();
    await tx("volume_sizes").where({ volume_id: id }).delete();
    await tx("volumes").where({ id }).delete();
  });
}
