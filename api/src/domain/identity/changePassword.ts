// A user changes its own password. Every token issued before (including the one making this call) stops
// working; the answer carries a fresh token so the console carries on without a second sign-in.

import { findUserById } from "../../db/operations/users/findUserById.ts";
import { updateUser } from "../../db/operations/users/updateUser.ts";
import type { Deps } from "../../deps.ts";
import { Invalid, InvalidCredentials, NotFound, TooManyRequests, Unauthorized } from "../../errors.ts";
import type { LoginResult } from "./login.ts";
import type { Principal } from "./principal.ts";

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 256;

export interface ChangePasswordInput {
  currentPassword: string;
  newPassword: string;
  source: string;
}

export async function changePassword(
  deps: Pick<Deps, "db" | "config" | "clock" | "auth">,
  principal: Principal,
  input: ChangePasswordInput,
): Promise<LoginResult> {
  const { hasher, tokens, throttle } = deps.auth;
  const user = await findUserById(deps.db, principal.userId);
  if (!user) throw new NotFound("user", principal.userId);

  // Guessing the current password with a stolen token is throttled like a sign-in.
  const attempt = await throttle.begin(user.email, input.source);
  if (attempt.refused) {
    throw new TooManyRequests("too many failed attempts; try again later", attempt.retryAfterSeconds, {
      reason: "too_many_attempts",
    });
  }
  if (!(await hasher.verify(user.password_hash, input.currentPassword))) {
    await attempt.failed();
    throw new InvalidCredentials("the current password is incorrect");
  }
  await attempt.succeeded();

  if (input.newPassword === input.currentPassword) {
    throw new Invalid("the new password must differ from the current one", [
      { path: ["body", "new_password"], message: "must differ from the current password", code: "password_unchanged" },
    ]);
  }
  const hash = await hasher.hash(input.newPassword);
  // Only if nobody changed it meanwhile: the version we checked against is the one we replace.
  const updated = await deps.db.transaction(async (trx) => {
    const current = await trx("users").where({ id: user.id }).forUpdate().first("token_version");
    if (!current || current.token_version !== user.token_version) return undefined;
    return updateUser(trx, user.id, { passwordHash: hash, mustChangePassword: false, revokeTokens: true });
  });
  if (!updated) throw new Unauthorized("the bearer token is no longer valid; sign in again");

  const issued = await tokens.issue({ userId: updated.id, tokenVersion: updated.token_version });
  return {
    accessToken: issued.token,
    expiresIn: issued.expiresIn,
    mustChangePassword: false,
    user: { id: updated.id, email: updated.email },
  };
}
