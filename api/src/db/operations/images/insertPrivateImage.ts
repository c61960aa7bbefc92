import type { Knex } from "knex";
import { type PrivateImageRow, SLOT_STATES } from "./types.ts";

export type NewPrivateImage = Omit<
  PrivateImageRow,
  | "failure_code"
  | "failure_reason"
  | "digest"
  | "size_bytes"
  | "bytes_total"
  | "bytes_copied"
  | "claimed_by"
  | "claimed_until"
  | "attempts"
  | "ready_at"
>;

/**
 * Inserts the image unless its owner already holds `limit` slots (ready images and imports or builds in
 * flight). The owner's advisory lock serializes the count and the insert: parallel requests cannot both
 * take the last slot.
 */
export async function insertPrivateImageWithinLimit(
  db: Knex,
  row: NewPrivateImage,
  limit: number,
): Promise<{ row: PrivateImageRow } | { refused: { count: number } }> {
  return db.transaction(async (tx) => {
    await tx.raw("SELECT pg_advisory_xact_lock(hashtext(?))", [`private_images/owner/${row.owner_id}`]);
    const count = await countSlots(tx, row.owner_id);
    if (count >= limit) return { refused: { count } };
    const [inserted] = (await tx("private_images").insert(row).returning("*")) as PrivateImageRow[];
    return { row: inserted as PrivateImageRow };
  });
}

export async function countSlots(db: Knex, ownerId: string): Promise<number> {
  const r = (await db("private_images")
    .where({ owner_id: ownerId })
    .whereIn("state", SLOT_STATES)
    .count({ n: "*" })
    .first()) as { n: string | number } | undefined;
  return Number(r?.n ?? 0);
}
