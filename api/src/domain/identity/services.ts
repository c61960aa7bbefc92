// The auth services a request needs, made once per Deps by buildDeps (deps.auth).
import type { Knex } from "knex";
import type { Config } from "../../config.ts";
import { DEFAULT_ARGON2, PasswordHasher } from "./password.ts";
import { LoginThrottle } from "./throttle.ts";
import { AccessTokens } from "./tokens.ts";

export interface AuthServices {
  hasher: PasswordHasher;
  tokens: AccessTokens;
  throttle: LoginThrottle;
}

/** One hasher per process: its dummy hash (for unknown emails) is made once, whatever the number of Deps. */
const sharedHasher = new PasswordHasher(DEFAULT_ARGON2);

export function accessTokensFor(config: Config, clock: { now(): Date }): AccessTokens {
  return new AccessTokens({
    secret: config.auth.jwtSecret.reveal(),
    ttlSeconds: config.auth.accessTokenTtlSeconds,
    now: () => clock.now(),
  });
}

export function createAuthServices(o: { db: Knex; config: Config; clock: { now(): Date } }): AuthServices {
  return {
    hasher: sharedHasher,
    tokens: accessTokensFor(o.config, o.clock),
    throttle: new LoginThrottle({ db: o.db, clock: o.clock }),
  };
}
