// Who is calling. The route layer owns the shapes; the implementation that turns a bearer token into a
// Principal lives in api/src/auth/ and is injected as deps.authenticate.
import type { Context } from "koa";

export interface Membership {
  organizationId: string;
  /** Set for a project-level membership; absent for an organization-level one. */
  projectId?: string;
  /** e.g. "org_admin", "project_admin", "member" (the auth domain owns the list). */
  role: string;
}

export interface Principal {
  userId: string;
  email: string;
  isSuperAdmin: boolean;
  mustChangePassword: boolean;
  memberships: Membership[];
}

/**
 * Turns a bearer token (without the "Bearer " prefix) into a Principal.
 * Throws `Unauthorized` (401 unauthenticated) for a bad token and `TokenExpired` (401 token_expired)
 * for an expired one; never returns a partial principal. The route layer handles a missing header and
 * the must_change_password gate itself.
 */
export type Authenticator = (ctx: Context, token: string) => Promise<Principal>;

/** Where each route stands on authentication. */
export type AuthMode =
  /** no token needed (login, health, docs) */
  | "public"
  /** a valid token whose user has no pending password change */
  | "user"
  /** a valid token, allowed while must_change_password is true (the password endpoints) */
  | "password-change";
