import type { Knex } from "knex";
import type { ProjectRow } from "./types.ts";

/** Throws 23505 when the organization already has a project of that name. */
export async function insertProject(
  db: Knex,
  p: { id: string; organizationId: string; name: string },
): Promise<ProjectRow> {
  const [row] = await db<ProjectRow>("projects")
    .insert({ id: p.id, organization_id: p.organizationId, name: p.name })
    .returning("*");
  return row as ProjectRow;
}
