import type { Knex } from "knex";
import type { PrivateImageRow } from "./types.ts";

/**
 * Changes an import the worker `claimedBy` holds; answers the row, or undefined when the import is no
 * longer its own (deleted by its owner, or taken over after the claim ran out).
 */
export async function updateClaimedImage(
  db: Knex,
  id: string,
  claimedBy: string,
  changes: Partial<PrivateImageRow>,
): Promise<PrivateImageRow | undefined> {
  const [row] = (await db("private_images")
    .where({ id, claimed_by: claimedBy })
    .whereIn("state", ["importing", "building"])
    .update(changes)
    .returning("*")) as PrivateImageRow[];
  return row;
}

/** Removes the row; answers whether there was one. */
export async function deletePrivateImageRow(db: Knex, id: string): Promise<boolean> {
  return (await db("private_images").where({ id }).delete()) > 0;
}
