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
  const [row] = await db<UserRow>("users")
    .insert({
      id: u.id,
      email: u.email,
      display_name: u.displayName ?? null,
      password_hash: u.passwordHash,
      must_change_password: u.mustChangePassword,
      is_super_admin: u.isSuperAdmin,
    })
    .returning("*");
  return row as UserRow;
}
