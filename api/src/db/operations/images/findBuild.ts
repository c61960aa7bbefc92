import type { Knex } from "knex";
import type { ImageBuildRow } from "./types.ts";

export async function findBuild(db: Knex, id: string): Promise<ImageBuildRow | undefined> {
  return (await db("image_builds").where({ id }).first()) as ImageBuildRow | undefined;
}
