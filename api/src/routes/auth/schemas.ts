import { z } from "zod";
import { NewPassword } from "../users/schemas.ts";

// Loose on purpose: a malformed email is just a failed sign-in (same answer, same time), not a 400 that
// would tell "no such account" apart from "wrong password" by shape.
export const LoginBody = z
  .object({
    email: z.string().min(1).max(320),
    password: z.string().min(1).max(1024),
  })
  .meta({ id: "LoginRequest" });

export const TokenResponse = z
  .object({
    access_token: z.string().meta({ description: "Send as Authorization: Bearer <access_token>." }),
    token_type: z.literal("bearer"),
    expires_in: z.int().meta({ description: "Seconds until the token expires; there is no refresh, sign in again." }),
    must_change_password: z.boolean().meta({ description: "When true, only the password endpoints may be called." }),
    user: z.object({ id: z.string(), email: z.string() }),
  })
  .meta({ id: "TokenResponse" });

export const ChangePasswordBody = z
  .object({
    current_password: z.string().min(1).max(1024),
    new_password: NewPassword.meta({ description: "At least 12 characters, different from the current password." }),
  })
  .meta({ id: "ChangePasswordRequest" });
