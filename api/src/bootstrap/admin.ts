// The bootstrap administrator: created once per database, at the first start, as a super_admin who must
// change its password at first sign-in (docs/dev/identity.md, Bootstrap administrator).
//
// "Once" is a row in bootstrap_markers written in the same transaction as the user: a second start, a
// restart after the administrator was renamed or deleted, and two replicas starting at the same moment
// all create nothing (the marker's primary key makes the second transaction wait, then find it).
import type { Knex } from "knex";
import { normalizeEmail } from "../domain/identity/email.ts";
import { newId } from "../domain/identity/ids.ts";
import { generatePassword, PasswordHasher } from "../domain/identity/password.ts";

export const BOOTSTRAP_ADMIN_MARKER = "bootstrap-admin";

export interface BootstrapAdminOptions {
  /** BERTH_BOOTSTRAP_EMAIL (default admin@berth.local). */
  email: string;
  /** BERTH_BOOTSTRAP_PASSWORD; when absent a password is generated and returned (once). */
  password?: string;
  hasher?: PasswordHasher;
}

export interface BootstrapAdminResult {
  created: boolean;
  email: string;
  userId?: string;
  /** Only when created with a generated password: show it once, it is not stored in clear. */
  generatedPassword?: string;
}

export async function ensureBootstrapAdmin(db: Knex, opts: BootstrapAdminOptions): Promise<BootstrapAdminResult> {
  const email = normalizeEmail(opts.email);
  // The common case (every start but the first) costs one read and no argon2.
  if (await db("bootstrap_markers").where({ name: BOOTSTRAP_ADMIN_MARKER }).first()) return { created: false, email };

  const password = opts.password ?? generatePassword();
  const generatedPassword = opts.password === undefined ? password : undefined;
  const hash = await (opts.hasher ?? new PasswordHasher()).hash(password);
  return db.transaction(async (trx) => {
    const marked = await trx("bootstrap_markers")
      .insert({ name: BOOTSTRAP_ADMIN_MARKER, details: { email } })
      .onConflict("name")
      .ignore()
      .returning("name");
    if (marked.length === 0) return { created: false, email };
    const id = newId("usr");
    const inserted = await trx("users")
      .insert({ id, email, password_hash: hash, must_change_password: true, is_super_admin: true })
      .onConflict("email")
      .ignore()
      .returning("id");
    // An account with that email already exists (made by hand before the first start): leave it be.
    if (inserted.length === 0) return { created: false, email };
    return { created: true, email, userId: id, ...(generatedPassword ? { generatedPassword } : {}) };
  });
}
