import type { Knex } from "knex";
import { ACTIVE_BUILD_STATES, type ImageBuildRow } from "./types.ts";

/** An owner's builds, newest first. */
export async function listBuilds(db: Knex, ownerId: string, limit = 100): Promise<ImageBuildRow[]> {
  return (await db("image_builds")
    .where({ owner_id: ownerId })
    .orderBy([
      { column: "created_at", order: "desc" },
      { column: "id", order: "desc" },
    ])
    .limit(limit)) as ImageBuildRow[];
}

/** Builds queued or running, oldest first (the worker drives them). */
export async function listActiveBuilds(db: Knex, limit = 200): Promise<ImageBuildRow[]> {
  return (await db("image_builds")
    .whereIn("state", ACTIVE_BUILD_STATES)
    .orderBy("created_at")
    .limit(limit)) as ImageBuildRow[];
}
