import type { Knex } from "knex";

export interface VolumeShareRow {
  subject_kind: "user" | "project";
  subject_id: string;
  access: "read_only" | "read_write";
}

/** Replaces whom a volume is shared with (the list's copy of the Volume resource's shares). */
export async function replaceVolumeShares(db: Knex, volumeId: string, shares: VolumeShareRow[]): Promise<void> {
  await db("volume_shares").where({ volume_id: volumeId }).delete();
  if (shares.length > 0) await db("volume_shares").insert(shares.map((s) => ({ volume_id: volumeId, ...s })));
}
