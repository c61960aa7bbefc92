// Public sign-up under the system's sign-up policy (domain/settings/schemas.ts): `closed` refuses,
// `open` makes an active account at once, `approval` makes a disabled account and a pending request
// that a super_admin approves (the account is enabled) or denies (it stays disabled). Allowed domains
// apply to both open policies; the new account joins the configured organization as a member, and receives
// its welcome credit (credits/welcome.ts) when it joins: at once when open, on approval otherwise.
import type { Knex } from "knex";
import { findMembership } from "../../db/operations/memberships/findMembership.ts";
import { listOrganizationAdmins } from "../../db/operations/memberships/listOrganizationAdmins.ts";
import { upsertMembership } from "../../db/operations/memberships/upsertMembership.ts";
import {
  decideSignupRequest,
  insertSignupRequest,
  type SignupRequestRow,
  signupRequestsQuery,
} from "../../db/operations/signup/signupRequests.ts";
import { insertUser } from "../../db/operations/users/insertUser.ts";
import { updateUser } from "../../db/operations/users/updateUser.ts";
import { type Page, type PagedBody, paginate } from "../../db/paging.ts";
import { DomainError, Forbidden, NotFound, TooManyRequests } from "../../errors.ts";
import { giveWelcomeCredit, reportUnpaidWelcome } from "../credits/welcome.ts";
import { normalizeEmail } from "../identity/email.ts";
import { mapConstraintErrors } from "../identity/errors.ts";
import { newId } from "../identity/ids.ts";
import type { Principal } from "../identity/principal.ts";
import type { LoginThrottle } from "../identity/throttle.ts";
import { readSystemSettings } from "../settings/settings.ts";

interface D {
  db: Knex;
  clock: { now(): Date };
  auth: { hasher: { hash(password: string): Promise<string> }; throttle: LoginThrottle };
}

export interface SignupResult {
  userId: string;
  status: "active" | "pending_approval";
}

export async function signUp(
  deps: D,
  input: { email: string; password: string; displayName?: string | undefined; source: string },
): Promise<SignupResult> {
  const { signup } = await readSystemSettings(deps.db);
  if (signup.policy === "closed")
    throw new DomainError("signup_closed", "sign-up is closed: ask an administrator for an account", {
      policy: "closed",
    });
  const email = normalizeEmail(input.email);
  // Every attempt costs a password hash and says whether an email is taken: counted like failed sign-ins,
  // under keys of their own so that sign-ups never use up a source's sign-in attempts.
  const attempt = await deps.auth.throttle.begin(`signup:${email}`, `signup:${input.source}`);
  if (attempt.refused)
    throw new TooManyRequests("too many sign-up attempts; try again later", attempt.retryAfterSeconds, {
      reason: "too_many_attempts",
    });
  const domain = email.slice(email.lastIndexOf("@") + 1);
  if (signup.allowed_domains.length > 0 && !signup.allowed_domains.includes(domain))
    throw new DomainError("signup_closed", `sign-up is open to ${signup.allowed_domains.join(", ")} addresses only`, {
      allowed_domains: signup.allowed_domains,
    });
  const hash = await deps.auth.hasher.hash(input.password);
  const pending = signup.policy === "approval";
  const at = deps.clock.now();
  return mapConstraintErrors(
    () =>
      deps.db.transaction(async (tx) => {
        const user = await insertUser(tx, {
          id: newId("usr"),
          email,
          displayName: input.displayName ?? null,
          passwordHash: hash,
          mustChangePassword: false,
          isSuperAdmin: false,
        });
        if (pending) {
          await updateUser(tx, user.id, { disabled: true });
          await insertSignupRequest(tx, { userId: user.id, email, organizationId: signup.organization_id, at });
        } else if (signup.organization_id) {
          const organizationId = signup.organization_id;
          await upsertMembership(tx, { userId: user.id, organizationId, projectId: null, role: "member" });
          const outcome = await giveWelcomeCredit(tx, {
            organizationId,
            userId: user.id,
            actorKind: "system",
            actorId: null,
            at,
          });
          // Nobody added this member: the organization's administrators hear that the wallet could not pay.
          for (const adminId of await listOrganizationAdmins(tx, organizationId))
            await reportUnpaidWelcome(tx, { adminId, organizationId, memberEmail: email, outcome, at });
        }
        return { userId: user.id, status: pending ? "pending_approval" : "active" } as SignupResult;
      }),
    { unique: "an account with this email already exists: sign in, or reset the password with an administrator" },
  );
}

/** The approval queue: super_admins see it; anyone else an empty list (scope, not 403). */
/** A page of the sign-up approval queue: super_admin's; anyone else sees an empty one. */
export function signupQueue<Out>(
  deps: D,
  p: Principal,
  status: string | undefined,
  page: Page,
  present: (row: SignupRequestRow) => Out,
): Promise<PagedBody<Out>> {
  const q = signupRequestsQuery(deps.db, status);
  if (!p.isSuperAdmin) q.whereRaw("false");
  return paginate(deps.db, q, page, present);
}

export async function decideSignup(
  deps: D,
  p: Principal,
  userId: string,
  decision: "approved" | "denied",
): Promise<SignupRequestRow> {
  if (!p.isSuperAdmin) throw new Forbidden("only a super_admin decides sign-up requests");
  return deps.db.transaction(async (tx) => {
    const row = await decideSignupRequest(tx, userId, { status: decision, by: p.userId, at: deps.clock.now() });
    if (!row) throw new NotFound("pending sign-up request", userId);
    if (decision === "approved") {
      await updateUser(tx, userId, { disabled: false });
      // A role an administrator gave the account while it waited is kept, not lowered to member.
      const key = { userId, organizationId: row.organization_id ?? "", projectId: null };
      if (row.organization_id && !(await findMembership(tx, key))) {
        await upsertMembership(tx, { ...key, role: "member" });
        const at = deps.clock.now();
        const outcome = await giveWelcomeCredit(tx, {
          organizationId: row.organization_id,
          userId,
          actorKind: "user",
          actorId: p.userId,
          at,
        });
        await reportUnpaidWelcome(tx, {
          adminId: p.userId,
          organizationId: row.organization_id,
          memberEmail: row.email,
          outcome,
          at,
        });
      }
    }
    return row;
  });
}
