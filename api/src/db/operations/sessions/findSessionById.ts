import type { Knex } from "knex";
import type { SessionRow } from "./types.ts";

export async function findSessionById(db: Knex, id: string): Promise<SessionRow | undefined> {
  return (await db("sessions").where({ id }).first()) as SessionRow | undefined;
}

export async function findSessionsByIds(db: Knex, ids: readonly string[]): Promise<SessionRow[]> {
  if (ids.length === 0) return [];
  return (await db("sessions").whereIn("id", ids)) as SessionRow[];
}
