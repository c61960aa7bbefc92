// Who is calling: the bearer token, checked by the composition root's authenticator (deps.authenticate), and
// the route's auth mode (principal.ts).
import type { Context } from "koa";
import type { Deps } from "../deps.ts";
import type { Principal } from "../domain/identity/principal.ts";
import { PasswordChangeRequired, Unauthorized } from "../errors.ts";
import type { AuthMode } from "./principal.ts";

function bearerToken(ctx: Context): string | undefined {
  const h = ctx.get("Authorization");
  const m = /^Bearer[ ]+([^\s]+)\s*$/i.exec(h);
  return m?.[1];
}

/** The caller of a request by its bearer token (undefined for public routes); a long-lived response (the
 * event stream) asks again with it. */
export async function authenticate(deps: Deps, ctx: Context, mode: AuthMode): Promise<Principal | undefined> {
  if (mode === "public") return undefined;
  const token = bearerToken(ctx);
  if (!token)
    throw new Unauthorized(
      ctx.get("Authorization") ? "the Authorization header must be 'Bearer <token>'" : "a bearer token is required",
    );
  const principal = await deps.authenticate(ctx, token);
  if (principal.mustChangePassword && mode !== "password-change") throw new PasswordChangeRequired();
  return principal;
}
