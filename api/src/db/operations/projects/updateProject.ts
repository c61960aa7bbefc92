import type { Knex } from "knex";
import type { ProjectRow } from "./types.ts";

export async function updateProject(db: Knex, id: string, c: { name?: string }): Promise<ProjectRow | undefined> {
  if (c.name === undefined) return db<ProjectRow>("projects").where({ id }).first();
  const [row] = await db<ProjectRow>("projects")
    .where({ id })
    .update({ name: c.name, updated_at: db.fn.now() })
    .returning("*");
  return row as ProjectRow | undefined;
}
