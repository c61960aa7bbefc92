import type { Knex } from "knex";
import type { UserRow } from "./types.ts";

export interface NewUser {
  id: string;
  email: string;
  displayName?: string | null;
  passwordHash: string;
  mustChangePassword: boolean;
  isSuperAdmin: boolean;
}

/** Throws the driver's unique violation (23505) when the email is taken. */
export async function insertUser(db: Knex, u: NewUser): Promise<UserRow> {
  return (await insertUsers(db, [u]))[0] as UserRow;
}

/** Many accounts in one statement (a bulk import's chunk); a taken email fails them all (23505). */
export async function insertUsers(db: Knex, us: readonly NewUser[]): Promise<UserRow[]> {
  if (us.length === 0) return [];
  return (await db<UserRow>("users")
    .insert(
      us.map((u) => ({
        id: u.id,
        email: u.email,
        display_name: u.displayName ?? null,
        password_hash: u.passwordHash,
        must_change_password: u.mustChangePassword,
        is_super_admin: u.isSuperAdmin,
      })),
    )
    .returning("*")) as UserRow[];
}
