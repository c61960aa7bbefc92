// A private image's changes on the event stream (GET /api/v1/sessions/events): `image.updated`, to its
// owner only, carrying the image as its routes present it (state, progress, digest, failure).
import type { Knex } from "knex";
import type { PrivateImageRow } from "../../db/operations/images/types.ts";
import { insertSessionEvents } from "../../db/operations/sessions/sessionEvents.ts";

export const IMAGE_UPDATED = "image.updated";

export async function emitImageUpdated(db: Knex, row: PrivateImageRow): Promise<void> {
  await insertSessionEvents(db, [
    {
      session_id: null,
      owner_id: row.owner_id,
      organization_id: null,
      project_id: null,
      type: IMAGE_UPDATED,
      payload: { image: row },
    },
  ]);
}
