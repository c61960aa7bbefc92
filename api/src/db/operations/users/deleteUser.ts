import type { Knex } from "knex";

/** Memberships go with the user (ON DELETE CASCADE). Returns whether a row was deleted. */
export async function deleteUser(db: Knex, id: string): Promise<boolean> {
  return (await db("users").where({ id }).del()) > 0;
}
