import type { Knex } from "knex";
import type { UserRow } from "./types.ts";

/** `email` must already be normalised (trimmed, lowercased). */
export async function findUserByEmail(db: Knex, email: string): Promise<UserRow | undefined> {
  return db<UserRow>("users").where({ email }).first();
}
