// The Authenticator the route layer calls (deps.authenticate): bearer token -> Principal.
// The user and its memberships come from Postgres through a short per-process cache (principalCache.ts):
// a revoked token (password changed, password reset, account disabled or deleted) and a changed role
// take effect on the next request in the process that made the change, and within the cache's lifetime
// (5 s by default) on every other replica, never only when the token expires.
import type { Knex } from "knex";
import type { Clock } from "../../clock.ts";
import type { Config } from "../../config.ts";
import { TokenExpired, Unauthorized } from "../../errors.ts";
import { loadPrincipal, loadPrincipals, type PrincipalRecord } from "./loadPrincipal.ts";
import type { TokenAuthenticator } from "./principal.ts";
import { PRINCIPAL_CACHE_SECONDS, PrincipalCache } from "./principalCache.ts";
import { accessTokensFor } from "./services.ts";
import { type AccessTokens, TokenRejected } from "./tokens.ts";

export type AuthenticatorOptions =
  | { db: Knex; config: Config; clock: Clock }
  | { db: Knex; tokens: AccessTokens; clock?: Clock; principalCacheSeconds?: number };

/** Whether the account as loaded still honours a token carrying `tokenVersion`. */
function honours(rec: PrincipalRecord, tokenVersion: number): boolean {
  return !rec.disabled && rec.tokenVersion === tokenVersion;
}

export function createAuthenticator(opts: AuthenticatorOptions): TokenAuthenticator {
  const { db } = opts;
  const clock = opts.clock;
  const tokens = "tokens" in opts ? opts.tokens : accessTokensFor(opts.config, opts.clock);
  const seconds =
    "config" in opts ? opts.config.auth.principalCacheSeconds : (opts.principalCacheSeconds ?? PRINCIPAL_CACHE_SECONDS);
  const principals = new PrincipalCache({
    ttlMs: seconds * 1000,
    now: clock ? () => clock.now().getTime() : Date.now,
    load: (userId) => loadPrincipal(db, userId),
    loadMany: (userIds) => loadPrincipals(db, userIds),
  });
  return async (_ctx, token) => {
    let claims: { userId: string; tokenVersion: number };
    try {
      claims = await tokens.verify(token);
    } catch (err) {
      if (err instanceof TokenRejected && err.reason === "expired") throw new TokenExpired();
      throw new Unauthorized("the bearer token is not valid; sign in again");
    }
    const cached = principals.get(claims.userId);
    if (cached && honours(cached, claims.tokenVersion)) return cached.principal;
    // A miss, or a cached record that would refuse: a refusal is decided on a fresh read (the record may
    // predate a re-enable or a new password made on another replica).
    const rec = await principals.load(claims.userId);
    if (!rec || !honours(rec, claims.tokenVersion)) {
      // One answer for all three (unknown, disabled, revoked): a caller cannot learn which happened.
      throw new Unauthorized("the bearer token is no longer valid; sign in again");
    }
    return rec.principal;
  };
}
