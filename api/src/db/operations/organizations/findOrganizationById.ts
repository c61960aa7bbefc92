import type { Knex } from "knex";
import type { OrganizationRow } from "./types.ts";

export async function findOrganizationById(db: Knex, id: string): Promise<OrganizationRow | undefined> {
  return db<OrganizationRow>("organizations").where({ id }).first();
}
