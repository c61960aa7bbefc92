// Accounts. Lists are the caller's scope (super_admin: everyone; others: themselves and the members of
// what they administer); an account outside the scope is 404, never 403.
import { z } from "zod";
import { Paged } from "../../db/paging.ts";
import { createUser, deleteUser, getUser, listUsers, updateUser } from "../../domain/identity/users.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentUser, presentUserDetail } from "./presenter.ts";
import { CreateUserBody, ListUsersQuery, UpdateUserBody, User, UserDetail, UserParams } from "./schemas.ts";

export const createUserRoute = defineRoute({
  method: "post",
  path: "/api/v1/users",
  operationId: "createUser",
  tags: ["users"],
  summary: "Create an account",
  description:
    "super_admins create any account; organization admins create accounts in their organizations (organization_id). " +
    "The password is temporary: the user must change it at first sign-in. An email already in use is 409 already_exists.",
  auth: "user",
  body: CreateUserBody,
  idempotent: true,
  audit: "user.create",
  errors: ["not_found", "already_exists"],
  responses: { 201: UserDetail },
  handler: async ({ deps, principal, body, audit }) => {
    if (body.organization_id) audit.organization(body.organization_id);
    const { user, memberships } = await createUser(deps, principal, {
      email: body.email,
      password: body.password,
      ...(body.display_name !== undefined ? { displayName: body.display_name } : {}),
      ...(body.is_super_admin !== undefined ? { isSuperAdmin: body.is_super_admin } : {}),
      ...(body.organization_id !== undefined ? { organizationId: body.organization_id } : {}),
      ...(body.role !== undefined ? { role: body.role } : {}),
    });
    audit.target("user", user.id);
    return { status: 201, body: presentUserDetail(user, memberships) };
  },
});

export const listUsersRoute = defineRoute({
  method: "get",
  path: "/api/v1/users",
  operationId: "listUsers",
  tags: ["users"],
  summary: "List the accounts you may see",
  description: "Filters outside your scope are ignored: the answer is what you may see, never 403.",
  auth: "user",
  query: ListUsersQuery,
  responses: { 200: Paged(User) },
  handler: async ({ deps, principal, query }) => {
    const { rows, total } = await listUsers(deps, principal, {
      page: query.page,
      size: query.size,
      ...(query.organization ? { organizationId: query.organization } : {}),
      ...(query.project ? { projectId: query.project } : {}),
      ...(query.email ? { emailPrefix: query.email } : {}),
    });
    return {
      status: 200,
      body: { data: rows.map(presentUser), pagination: { page: query.page, size: query.size, total } },
    };
  },
});

export const getUserRoute = defineRoute({
  method: "get",
  path: "/api/v1/users/:userId",
  operationId: "getUser",
  tags: ["users"],
  summary: "An account and its memberships",
  auth: "user",
  params: UserParams,
  responses: { 200: UserDetail },
  handler: async ({ deps, principal, params }) => {
    const { user, memberships } = await getUser(deps, principal, params.userId);
    return { status: 200, body: presentUserDetail(user, memberships) };
  },
});

export const updateUserRoute = defineRoute({
  method: "patch",
  path: "/api/v1/users/:userId",
  operationId: "updateUser",
  tags: ["users"],
  summary: "Change an account",
  description:
    "Yourself: display_name (your password: POST /api/v1/auth/password). An administrator of the account: also email, " +
    "disabled and a password reset. super_admins: also is_super_admin.",
  auth: "user",
  params: UserParams,
  body: UpdateUserBody,
  audit: "user.update",
  errors: ["current_password_required", "conflict", "already_exists"],
  responses: { 200: UserDetail },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("user", params.userId);
    audit.detail(
      "fields",
      Object.keys(body).filter((k) => k !== "password" || body.password !== undefined),
    );
    const { user, memberships } = await updateUser(deps, principal, params.userId, {
      ...(body.email !== undefined ? { email: body.email } : {}),
      ...(body.display_name !== undefined ? { displayName: body.display_name } : {}),
      ...(body.is_super_admin !== undefined ? { isSuperAdmin: body.is_super_admin } : {}),
      ...(body.disabled !== undefined ? { disabled: body.disabled } : {}),
      ...(body.password !== undefined ? { password: body.password } : {}),
    });
    return { status: 200, body: presentUserDetail(user, memberships) };
  },
});

export const deleteUserRoute = defineRoute({
  method: "delete",
  path: "/api/v1/users/:userId",
  operationId: "deleteUser",
  tags: ["users"],
  summary: "Delete an account",
  auth: "user",
  params: UserParams,
  audit: "user.delete",
  errors: ["conflict"],
  responses: { 204: z.null() },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("user", params.userId);
    await deleteUser(deps, principal, params.userId);
    return { status: 204, body: null };
  },
});

export const routes: RouteDef[] = [createUserRoute, listUsersRoute, getUserRoute, updateUserRoute, deleteUserRoute];
