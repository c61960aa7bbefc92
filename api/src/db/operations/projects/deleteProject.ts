import type { Knex } from "knex";
import { identityChanged } from "../users/identityChanged.ts";

/** The project's memberships go with it (ON DELETE CASCADE): anyone's principal may have changed. */
export async function deleteProject(db: Knex, id: string): Promise<boolean> {
  const deleted = (await db("projects").where({ id }).del()) > 0;
  identityChanged(db, null);
  return deleted;
}
