import type { Knex } from "knex";
import type { ProjectRow } from "./types.ts";

export async function findProjectById(db: Knex, id: string): Promise<ProjectRow | undefined> {
  return db<ProjectRow>("projects").where({ id }).first();
}
