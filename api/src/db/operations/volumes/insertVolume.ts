import type { Knex } from "knex";
import type { VolumeRow } from "./types.ts";

/** The row, its first size and its billing state (charged from its creation): one transaction's writes. */
export async function insertVolume(db: Knex, row: Omit<VolumeRow, "deleted_at" | "purge_after">): Promise<VolumeRow> {
  const [inserted] = await db<VolumeRow>("volumes").insert(row).returning("*");
  await db("volume_sizes").insert({ volume_id: row.id, from_at: row.created_at, size_gb: row.size_gb });
  await db("billing_volumes").insert({ volume_id: row.id, billed_until: row.created_at, updated_at: row.created_at });
  return inserted as VolumeRow;
}
