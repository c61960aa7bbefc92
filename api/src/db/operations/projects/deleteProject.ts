import type { Knex } from "knex";

/** The project's memberships go with it (ON DELETE CASCADE). */
export async function deleteProject(db: Knex, id: string): Promise<boolean> {
  return (await db("projects").where({ id }).del()) > 0;
}
