import type { Knex } from "knex";
import type { VolumeRow } from "./types.ts";

export async function insertVolume(db: Knex, row: Omit<VolumeRow, "deleted_at">): Promise<VolumeRow> {
  const [inserted] = await db<VolumeRow>("volumes").insert(row).returning("*");
  return inserted as VolumeRow;
}
