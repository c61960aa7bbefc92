import type { Knex } from "knex";
import { ACTIVE_BUILD_STATES, type ImageBuildRow } from "./types.ts";

/** Changes a build that is still queued or running; undefined when it has finished meanwhile. */
export async function updateActiveBuild(
  db: Knex,
  id: string,
  changes: Partial<ImageBuildRow>,
): Promise<ImageBuildRow | undefined> {
  const [row] = (await db("image_builds")
    .where({ id })
    .whereIn("state", ACTIVE_BUILD_STATES)
    .update(changes)
    .returning("*")) as ImageBuildRow[];
  return row;
}
