import type { Knex } from "knex";
import { identityChanged } from "./identityChanged.ts";
import type { UserRow } from "./types.ts";

export interface UserChanges {
  email?: string;
  displayName?: string | null;
  isSuperAdmin?: boolean;
  disabled?: boolean;
  mustChangePassword?: boolean;
  /** Replaces the password hash and records when. */
  passwordHash?: string;
  /** Invalidate every access token issued so far (bumps token_version). */
  revokeTokens?: boolean;
  lastLoginAt?: Date;
}

/** The columns a Principal is made of (domain/identity/loadPrincipal.ts): a change to one of them must reach the cache. */
const PRINCIPAL_COLUMNS = ["email", "is_super_admin", "must_change_password", "disabled", "token_version"];

/** Returns the updated row, or undefined when there is no such user. */
export async function updateUser(db: Knex, id: string, c: UserChanges): Promise<UserRow | undefined> {
  const set: Record<string, unknown> = {};
  if (c.email !== undefined) set.email = c.email;
  if (c.displayName !== undefined) set.display_name = c.displayName;
  if (c.isSuperAdmin !== undefined) set.is_super_admin = c.isSuperAdmin;
  if (c.disabled !== undefined) set.disabled = c.disabled;
  if (c.mustChangePassword !== undefined) set.must_change_password = c.mustChangePassword;
  if (c.passwordHash !== undefined) {
    set.password_hash = c.passwordHash;
    set.password_changed_at = db.fn.now();
  }
  if (c.revokeTokens) set.token_version = db.raw("token_version + 1");
  if (c.lastLoginAt !== undefined) set.last_login_at = c.lastLoginAt;
  if (Object.keys(set).length === 0) return db<UserRow>("users").where({ id }).first();
  // A login stamp alone is not an edit of the account.
  if (Object.keys(set).some((k) => k !== "last_login_at")) set.updated_at = db.fn.now();
  const [row] = await db<UserRow>("users").where({ id }).update(set).returning("*");
  if (PRINCIPAL_COLUMNS.some((k) => k in set)) identityChanged(db, id);
  return row as UserRow | undefined;
}
