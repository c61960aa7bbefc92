import type { Knex } from "knex";

/** Ids of the super_admins who can sign in (those told about the fleet's own trouble). */
export async function activeSuperAdminIds(db: Knex): Promise<string[]> {
  return (await db("users").where({ is_super_admin: true, disabled: false }).orderBy("id").pluck("id")) as string[];
}
