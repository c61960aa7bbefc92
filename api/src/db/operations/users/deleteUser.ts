import type { Knex } from "knex";
import { identityChanged } from "./identityChanged.ts";

/** Memberships go with the user (ON DELETE CASCADE). Returns whether a row was deleted. */
export async function deleteUser(db: Knex, id: string): Promise<boolean> {
  const deleted = (await db("users").where({ id }).del()) > 0;
  identityChanged(db, id);
  return deleted;
}
