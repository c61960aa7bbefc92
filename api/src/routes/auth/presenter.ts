import type { z } from "zod";
import type { LoginResult } from "../../domain/identity/login.ts";
import type { TokenResponse } from "./schemas.ts";

export function presentToken(r: LoginResult): z.infer<typeof TokenResponse> {
  return {
    access_token: r.accessToken,
    token_type: "bearer",
    expires_in: r.expiresIn,
    must_change_password: r.mustChangePassword,
    user: { id: r.user.id, email: r.user.email },
  };
}
