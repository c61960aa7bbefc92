import type { Knex } from "knex";
import type { PrivateImageRow } from "./types.ts";

export async function findPrivateImage(db: Knex, id: string): Promise<PrivateImageRow | undefined> {
  return (await db("private_images").where({ id }).first()) as PrivateImageRow | undefined;
}
