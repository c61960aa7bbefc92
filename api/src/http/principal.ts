// How the route layer learns who is calling. Principal belongs to the identity domain
// (domain/identity/principal.ts); the implementation that turns a bearer token into one lives there too
// (domain/identity/authenticator.ts) and is injected as deps.authenticate.
import type { Context } from "koa";
import type { Principal } from "../domain/identity/principal.ts";

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
