// The auth services a request needs, built once per Deps (tests build their own Deps and get their own).
import type { Config } from "../../config.ts";
import type { Clock, Deps } from "../../deps.ts";
import { DEFAULT_ARGON2, PasswordHasher } from "./password.ts";
import { LoginThrottle } from "./throttle.ts";
import { AccessTokens } from "./tokens.ts";

export interface AuthServices {
  hasher: PasswordHasher;
  tokens: AccessTokens;
  throttle: LoginThrottle;
}

/** One hasher per process: its dummy hash (for unknown emails) is made once. */
const sharedHasher = new PasswordHasher(DEFAULT_ARGON2);

const cache = new WeakMap<object, AuthServices>();

export function accessTokensFor(config: Config, clock: Clock): AccessTokens {
  return new AccessTokens({
    secret: config.auth.jwtSecret.reveal(),
    ttlSeconds: config.auth.accessTokenTtlSeconds,
    now: () => clock.now(),
  });
}

export function authServices(deps: Pick<Deps, "db" | "config" | "clock">): AuthServices {
  let s = cache.get(deps);
  if (!s) {
    s = {
      hasher: sharedHasher,
      tokens: accessTokensFor(deps.config, deps.clock),
      throttle: new LoginThrottle({ db: deps.db, clock: deps.clock }),
    };
    cache.set(deps, s);
  }
  return s;
}
