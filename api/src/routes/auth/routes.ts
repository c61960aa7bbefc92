// Sign-in, the password endpoints and "who am I".

import { changePassword } from "../../domain/identity/changePassword.ts";
import { login } from "../../domain/identity/login.ts";
import { getUser } from "../../domain/identity/users.ts";
import { clientAddressOf } from "../../http/clientAddress.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentUserDetail } from "../users/presenter.ts";
import { UserDetail } from "../users/schemas.ts";
import { presentToken } from "./presenter.ts";
import { ChangePasswordBody, LoginBody, TokenResponse } from "./schemas.ts";

export const loginRoute = defineRoute({
  method: "post",
  path: "/api/v1/auth/login",
  operationId: "login",
  tags: ["auth"],
  summary: "Sign in with email and password",
  description:
    "Answers a short-lived bearer token (expires_in seconds; 15 minutes by default; no refresh: sign in again). " +
    "A wrong password and an unknown email get the same 401 invalid_credentials. Repeated failures are throttled " +
    "(5 per account and source address, 50 per source, 50 per account, in 15 minutes): 429 too_many_requests with Retry-After.",
  auth: "public",
  body: LoginBody,
  audit: "auth.login",
  errors: ["invalid_credentials", "too_many_requests"],
  responses: { 200: TokenResponse },
  handler: async ({ deps, body, ctx, audit }) => {
    audit.detail("email", body.email.trim().toLowerCase());
    const r = await login(deps, { email: body.email, password: body.password, source: clientAddressOf(ctx) });
    audit.target("user", r.user.id);
    return { status: 200, body: presentToken(r) };
  },
});

export const changePasswordRoute = defineRoute({
  method: "post",
  path: "/api/v1/auth/password",
  operationId: "changePassword",
  tags: ["auth"],
  summary: "Change your own password",
  description:
    "Allowed while must_change_password is true. Every token issued before stops working; the answer carries a new one. " +
    "The new password has at least 12 characters and differs from the current one.",
  auth: "password-change",
  body: ChangePasswordBody,
  audit: "auth.password_change",
  errors: ["invalid_credentials", "too_many_requests"],
  responses: { 200: TokenResponse },
  handler: async ({ deps, principal, body, ctx, audit }) => {
    audit.target("user", principal.userId);
    const r = await changePassword(deps, principal, {
      currentPassword: body.current_password,
      newPassword: body.new_password,
      source: clientAddressOf(ctx),
    });
    return { status: 200, body: presentToken(r) };
  },
});

export const meRoute = defineRoute({
  method: "get",
  path: "/api/v1/auth/me",
  operationId: "getMe",
  tags: ["auth"],
  summary: "The signed-in account and its memberships",
  auth: "user",
  responses: { 200: UserDetail },
  handler: async ({ deps, principal }) => {
    const { user, memberships } = await getUser(deps, principal, principal.userId);
    return { status: 200, body: presentUserDetail(user, memberships) };
  },
});

export const routes: RouteDef[] = [loginRoute, changePasswordRoute, meRoute];
