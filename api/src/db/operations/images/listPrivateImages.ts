import type { Knex } from "knex";
import type { PrivateImageRow } from "./types.ts";

/** An owner's private images, newest first (at most the per-member limit plus failed ones). */
export async function listPrivateImages(db: Knex, ownerId: string, limit = 500): Promise<PrivateImageRow[]> {
  return (await db("private_images")
    .where({ owner_id: ownerId })
    .orderBy([
      { column: "created_at", order: "desc" },
      { column: "id", order: "desc" },
    ])
    .limit(limit)) as PrivateImageRow[];
}
