// The Authenticator the route layer calls (deps.authenticate): bearer token -> Principal.
// Every call reads the user and its memberships from Postgres, so a revoked token (password changed,
// password reset, account disabled or deleted) and a changed role take effect on the next request,
// not when the token expires.
import type { Knex } from "knex";
import type { Config } from "../config.ts";
import type { Clock } from "../deps.ts";
import { TokenExpired, Unauthorized } from "../errors.ts";
import type { Authenticator } from "../http/principal.ts";
import { loadPrincipal } from "./principal.ts";
import { accessTokensFor } from "./services.ts";
import { type AccessTokens, TokenRejected } from "./tokens.ts";

export function createAuthenticator(
  opts: { db: Knex; config: Config; clock: Clock } | { db: Knex; tokens: AccessTokens },
): Authenticator {
  const { db } = opts;
  const tokens = "tokens" in opts ? opts.tokens : accessTokensFor(opts.config, opts.clock);
  return async (_ctx, token) => {
    let claims: { userId: string; tokenVersion: number };
    try {
      claims = await tokens.verify(token);
    } catch (err) {
      if (err instanceof TokenRejected && err.reason === "expired") throw new TokenExpired();
      throw new Unauthorized("the bearer token is not valid; sign in again");
    }
    const rec = await loadPrincipal(db, claims.userId);
    if (!rec || rec.disabled || rec.tokenVersion !== claims.tokenVersion) {
      // One answer for all three: a caller cannot learn which of them happened.
      throw new Unauthorized("the bearer token is no longer valid; sign in again");
    }
    return rec.principal;
  };
}
