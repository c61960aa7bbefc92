import type { Knex } from "knex";

/** Memberships go with it; projects do not (RESTRICT): throws 23503 while it still has projects. */
export async function deleteOrganization(db: Knex, id: string): Promise<boolean> {
  return (await db("organizations").where({ id }).del()) > 0;
}
