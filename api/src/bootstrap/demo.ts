// The local demo of `npm start`: an organization "Demo" with a project "Research", a researcher who is a
// member of both, 100 credits issued to the organization and 25 of them allocated to the researcher's own
// wallet (which sessions draw on first, and which a member can see) — so the milestone's journey (sign in, start
// an H100 session, pause it, see it charged) works on a fresh clone without an administrator's set-up.
// Created once per database, like the bootstrap administrator (a bootstrap_markers row written in the same
// transaction), never by the API process itself: only `npm start` asks for it (BERTH_DEMO=0 turns it off).
import type { Knex } from "knex";
import { upsertMembership } from "../db/operations/memberships/upsertMembership.ts";
import { insertOrganization } from "../db/operations/organizations/insertOrganization.ts";
import { insertProject } from "../db/operations/projects/insertProject.ts";
import { insertUser } from "../db/operations/users/insertUser.ts";
import { grantToOrganization } from "../domain/credits/grant.ts";
import { transfer } from "../domain/credits/ledger.ts";
import { MINOR_UNITS_PER_CREDIT } from "../domain/credits/money.ts";
import { ensureWallet } from "../domain/credits/wallets.ts";
import { normalizeEmail } from "../domain/identity/email.ts";
import { newId } from "../domain/identity/ids.ts";
import { generatePassword, PasswordHasher } from "../domain/identity/password.ts";

export const LOCAL_DEMO_MARKER = "local-demo";

export interface LocalDemoOptions {
  email?: string;
  /** When absent a password is generated and returned (once). */
  password?: string;
  credits?: bigint;
  /** Allocated from the organization's credits to the researcher's own wallet. */
  personalCredits?: bigint;
  hasher?: PasswordHasher;
  now?: Date;
}

export interface LocalDemoResult {
  created: boolean;
  email: string;
  organizationId?: string;
  projectId?: string;
  userId?: string;
  generatedPassword?: string;
}

export async function ensureLocalDemo(db: Knex, opts: LocalDemoOptions = {}): Promise<LocalDemoResult> {
  const email = normalizeEmail(opts.email ?? "researcher@berth.local");
  if (await db("bootstrap_markers").where({ name: LOCAL_DEMO_MARKER }).first()) return { created: false, email };
  const generatedPassword = opts.password === undefined ? generatePassword() : undefined;
  const hash = await (opts.hasher ?? new PasswordHasher()).hash(opts.password ?? (generatedPassword as string));
  const at = opts.now ?? new Date();
  return db.transaction(async (trx) => {
    const marked = await trx("bootstrap_markers")
      .insert({ name: LOCAL_DEMO_MARKER, details: { email } })
      .onConflict("name")
      .ignore()
      .returning("name");
    if (marked.length === 0) return { created: false, email };
    // Someone already made an account with that email or an organization with that slug: leave them be.
    if ((await trx("users").where({ email }).first()) || (await trx("organizations").where({ slug: "demo" }).first()))
      return { created: false, email };
    const org = await insertOrganization(trx, { id: newId("org"), name: "Demo", slug: "demo" });
    const project = await insertProject(trx, { id: newId("prj"), organizationId: org.id, name: "Research" });
    const user = await insertUser(trx, {
      id: newId("usr"),
      email,
      passwordHash: hash,
      mustChangePassword: true,
      isSuperAdmin: false,
    });
    await upsertMembership(trx, { userId: user.id, organizationId: org.id, projectId: null, role: "member" });
    await upsertMembership(trx, { userId: user.id, organizationId: org.id, projectId: project.id, role: "member" });
    const { wallet: orgWallet } = await grantToOrganization(trx, {
      organizationId: org.id,
      amount: opts.credits ?? 100n * MINOR_UNITS_PER_CREDIT,
      actorKind: "system",
      actorId: null,
      reason: "npm start: the local demo's credits",
      idempotencyKey: LOCAL_DEMO_MARKER,
      at,
    });
    const { wallet: own } = await ensureWallet(trx, { organizationId: org.id, kind: "user", id: user.id }, at);
    await transfer(trx, {
      kind: "allocation",
      fromWalletId: orgWallet.id,
      toWalletId: own.id,
      amount: opts.personalCredits ?? 25n * MINOR_UNITS_PER_CREDIT,
      actorKind: "system",
      actorId: null,
      reason: "npm start: the researcher's own credits",
      organizationId: org.id,
      idempotencyKey: `${LOCAL_DEMO_MARKER}:personal`,
      at,
    });
    return {
      created: true,
      email,
      organizationId: org.id,
      projectId: project.id,
      userId: user.id,
      ...(generatedPassword ? { generatedPassword } : {}),
    };
  });
}
