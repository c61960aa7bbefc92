import type { Knex } from "knex";
import type { OrganizationRow } from "./types.ts";

export async function updateOrganization(
  db: Knex,
  id: string,
  c: { name?: string; slug?: string },
): Promise<OrganizationRow | undefined> {
  const set: Record<string, unknown> = {};
  if (c.name !== undefined) set.name = c.name;
  if (c.slug !== undefined) set.slug = c.slug;
  if (Object.keys(set).length === 0) return db<OrganizationRow>("organizations").where({ id }).first();
  set.updated_at = db.fn.now();
  const [row] = await db<OrganizationRow>("organizations").where({ id }).update(set).returning("*");
  return row as OrganizationRow | undefined;
}
