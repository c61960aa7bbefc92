import type { Knex } from "knex";
import type { OrganizationRow } from "./types.ts";

/** Throws the driver's unique violation (23505) when the slug is taken. */
export async function insertOrganization(
  db: Knex,
  o: { id: string; name: string; slug: string },
): Promise<OrganizationRow> {
  const [row] = await db<OrganizationRow>("organizations").insert(o).returning("*");
  return row as OrganizationRow;
}
