import type { Knex } from "knex";
import type { UserRow } from "./types.ts";

export async function findUserById(db: Knex, id: string): Promise<UserRow | undefined> {
  return db<UserRow>("users").where({ id }).first();
}
