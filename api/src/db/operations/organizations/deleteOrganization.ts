import type { Knex } from "knex";
import { identityChanged } from "../users/identityChanged.ts";

/** Memberships go with it; projects do not (RESTRICT): throws 23503 while it still has projects. */
export async function deleteOrganization(db: Knex, id: string): Promise<boolean> {
  const deleted = (await db("organizations").where({ id }).del()) > 0;
  // Its memberships went with it (ON DELETE CASCADE): anyone's principal may have changed.
  identityChanged(db, null);
  return deleted;
}
