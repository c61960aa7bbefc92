// Sign-in. An unknown email and a wrong password get the same error after the same work: the unknown
// email still pays for one argon2id verification (against a dummy hash), and both count in the throttle.

import { findUserByEmail } from "../../db/operations/users/findUserByEmail.ts";
import { updateUser } from "../../db/operations/users/updateUser.ts";
import type { Deps } from "../../deps.ts";
import { InvalidCredentials, TooManyRequests } from "../../errors.ts";
import { normalizeEmail } from "./email.ts";

export interface LoginInput {
  email: string;
  password: string;
  /** The client's address, as the route layer determined it. */
  source: string;
}

export interface LoginResult {
  accessToken: string;
  expiresIn: number;
  mustChangePassword: boolean;
  user: { id: string; email: string };
}

export async function login(
  deps: Pick<Deps, "db" | "config" | "clock" | "auth">,
  input: LoginInput,
): Promise<LoginResult> {
  const { hasher, tokens, throttle } = deps.auth;
  const email = normalizeEmail(input.email);

  const attempt = await throttle.begin(email, input.source);
  if (attempt.refused) {
    throw new TooManyRequests("too many failed sign-ins; try again later", attempt.retryAfterSeconds, {
      reason: "too_many_attempts",
    });
  }

  const user = await findUserByEmail(deps.db, email);
  const ok = user ? await hasher.verify(user.password_hash, input.password) : await hasher.verifyDummy(input.password);
  // A disabled account answers like a wrong password, after the same work.
  if (!user || !ok || user.disabled) {
    await attempt.failed();
    throw new InvalidCredentials();
  }
  // Parameters raised since this hash was made: re-hash now, while we hold the plain password.
  const rehash = hasher.needsRehash(user.password_hash) ? await hasher.hash(input.password) : undefined;
  const [, , issued] = await Promise.all([
    attempt.succeeded(),
    updateUser(deps.db, user.id, { lastLoginAt: deps.clock.now(), ...(rehash ? { passwordHash: rehash } : {}) }),
    tokens.issue({ userId: user.id, tokenVersion: user.token_version }),
  ]);
  return {
    accessToken: issued.token,
    expiresIn: issued.expiresIn,
    mustChangePassword: user.must_change_password,
    user: { id: user.id, email: user.email },
  };
}
