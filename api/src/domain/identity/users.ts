// Accounts: create, list, read, change, delete. See scope.ts for who may do what.

import { listMembershipsOfUser } from "../../db/operations/memberships/listMembershipsOfUser.ts";
import type { MembershipRow } from "../../db/operations/memberships/types.ts";
import { upsertMembership } from "../../db/operations/memberships/upsertMembership.ts";
import { findOrganizationById } from "../../db/operations/organizations/findOrganizationById.ts";
import { countActiveSuperAdmins } from "../../db/operations/users/countActiveSuperAdmins.ts";
import { deleteUser as deleteUserRow } from "../../db/operations/users/deleteUser.ts";
import { findUserById } from "../../db/operations/users/findUserById.ts";
import { insertUser } from "../../db/operations/users/insertUser.ts";
import { listUsers as listUserRows } from "../../db/operations/users/listUsers.ts";
import type { UserListRow, UserRow } from "../../db/operations/users/types.ts";
import { type UserChanges, updateUser as updateUserRow } from "../../db/operations/users/updateUser.ts";
import type { Deps } from "../../deps.ts";
import { Conflict, DomainError, Forbidden, NotFound } from "../../errors.ts";
import { giveWelcomeCredit, reportUnpaidWelcome } from "../credits/welcome.ts";
import { normalizeEmail } from "./email.ts";
import { mapConstraintErrors } from "./errors.ts";
import { newId } from "./ids.ts";
import type { Principal } from "./principal.ts";
import { canAdminOrganization, canManageUser, canSeeOrganization, canSeeUser, scopeOf } from "./scope.ts";

type IdentityDeps = Pick<Deps, "db" | "config" | "clock" | "auth">;

export interface UserWithMemberships {
  user: UserRow;
  memberships: MembershipRow[];
}

export interface CreateUserInput {
  email: string;
  /** Temporary: the new user must change it at first sign-in. */
  password: string;
  displayName?: string | null;
  isSuperAdmin?: boolean;
  organizationId?: string;
  role?: "org_admin" | "member";
}

/**
 * super_admin: any account, anywhere. org_admin: an account in one of its organizations (the new user
 * joins it with `role`, member by default). Everyone else: 403. The password is temporary: the new user
 * must change it at first sign-in. (The caller sets it rather than us generating one: a generated
 * password in the answer would sit in clear in the idempotency store for a day.)
 */
export async function createUser(
  deps: IdentityDeps,
  principal: Principal,
  input: CreateUserInput,
): Promise<UserWithMemberships> {
  const s = scopeOf(principal);
  if (!s.all) {
    if (input.isSuperAdmin) throw new Forbidden("only a super_admin can create a super_admin");
    if (input.organizationId === undefined) {
      if (s.adminOrganizations.size === 0)
        throw new Forbidden("only super_admins and organization admins create users");
      throw new Forbidden("name the organization the user joins (organization_id)");
    }
    if (!canSeeOrganization(s, input.organizationId)) throw new NotFound("organization", input.organizationId);
    if (!canAdminOrganization(s, input.organizationId))
      throw new Forbidden("only the organization's admins add users to it");
  }
  if (input.organizationId !== undefined && !(await findOrganizationById(deps.db, input.organizationId))) {
    throw new NotFound("organization", input.organizationId);
  }

  const hash = await deps.auth.hasher.hash(input.password);
  const email = normalizeEmail(input.email);
  return mapConstraintErrors(
    () =>
      deps.db.transaction(async (trx) => {
        const user = await insertUser(trx, {
          id: newId("usr"),
          email,
          displayName: input.displayName ?? null,
          passwordHash: hash,
          mustChangePassword: true,
          isSuperAdmin: input.isSuperAdmin ?? false,
        });
        const memberships: MembershipRow[] = [];
        if (input.organizationId !== undefined) {
          const { row } = await upsertMembership(trx, {
            userId: user.id,
            organizationId: input.organizationId,
            projectId: null,
            role: input.role ?? "member",
          });
          memberships.push(row);
          const at = deps.clock.now();
          const welcome = await giveWelcomeCredit(trx, {
            organizationId: input.organizationId,
            userId: user.id,
            actorKind: "user",
            actorId: principal.userId,
            at,
          });
          await reportUnpaidWelcome(trx, {
            adminId: principal.userId,
            organizationId: input.organizationId,
            memberEmail: email,
            outcome: welcome,
            at,
          });
        }
        return { user, memberships };
      }),
    { unique: "a user with this email already exists", details: { field: "email" } },
  );
}

export interface ListUsersInput {
  organizationId?: string;
  projectId?: string;
  emailPrefix?: string;
  page: number;
  size: number;
}

/**
 * The caller's scope: super_admin all; others themselves plus the members of what they administer.
 * A filter naming an organization or project outside the caller's scope is ignored: the answer is the
 * caller's scope (docs/dev/identity.md), never a 403.
 */
export async function listUsers(
  deps: IdentityDeps,
  principal: Principal,
  input: ListUsersInput,
): Promise<{ rows: UserListRow[]; total: number }> {
  const s = scopeOf(principal);
  const inScopeOrg =
    input.organizationId !== undefined &&
    (s.all || s.adminOrganizations.has(input.organizationId) || s.organizations.has(input.organizationId));
  const inScopeProject =
    input.projectId !== undefined &&
    (s.all ||
      s.projects.has(input.projectId) ||
      s.adminProjects.has(input.projectId) ||
      (await projectInAdminOrg(deps, s.adminOrganizations, input.projectId)));
  return listUserRows(deps.db, {
    ...(s.all
      ? {}
      : {
          visibleTo: {
            selfId: s.userId,
            adminOrganizationIds: [...s.adminOrganizations],
            adminProjectIds: [...s.adminProjects],
          },
        }),
    ...(inScopeOrg ? { organizationId: input.organizationId } : {}),
    ...(inScopeProject ? { projectId: input.projectId } : {}),
    ...(input.emailPrefix ? { emailPrefix: input.emailPrefix } : {}),
    limit: input.size,
    offset: (input.page - 1) * input.size,
  });
}

async function projectInAdminOrg(deps: IdentityDeps, adminOrgs: Set<string>, projectId: string): Promise<boolean> {
  if (adminOrgs.size === 0) return false;
  const p = await deps.db("projects").where({ id: projectId }).first("organization_id");
  return p !== undefined && adminOrgs.has(p.organization_id);
}

/** The account and its memberships, or 404 when it does not exist or is outside the caller's scope. */
export async function getUser(deps: IdentityDeps, principal: Principal, userId: string): Promise<UserWithMemberships> {
  const s = scopeOf(principal);
  const user = await findUserById(deps.db, userId);
  if (!user) throw new NotFound("user", userId);
  const memberships = await listMembershipsOfUser(deps.db, userId);
  if (!canSeeUser(s, userId, memberships)) throw new NotFound("user", userId);
  return { user, memberships };
}

export interface UpdateUserInput {
  email?: string;
  displayName?: string | null;
  isSuperAdmin?: boolean;
  disabled?: boolean;
  /** An administrator's reset: a temporary password the user must change at next sign-in. */
  password?: string;
}

/**
 * Self: display_name only (the password goes through /auth/password, whatever the role: 403
 * current_password_required here). An administrator of the account
 * (canManageUser): email, display_name, disabled, a password reset. super_admin: also is_super_admin.
 * Disabling and resetting revoke the account's tokens at once.
 */
export async function updateUser(
  deps: IdentityDeps,
  principal: Principal,
  userId: string,
  input: UpdateUserInput,
): Promise<UserWithMemberships> {
  const s = scopeOf(principal);
  const { user, memberships } = await getUser(deps, principal, userId);
  const self = userId === s.userId;
  const manages = canManageUser(s, user, memberships);
  const adminFields =
    input.email !== undefined ||
    input.disabled !== undefined ||
    input.password !== undefined ||
    input.isSuperAdmin !== undefined;

  if (!self && !manages) throw new Forbidden("you may not change this account");
  // A stolen token, even a super_admin's, must not be enough to take the account over for good: one's
  // own password changes only with the current one.
  if (self && input.password !== undefined) {
    throw new DomainError(
      "current_password_required",
      "change your own password at POST /api/v1/auth/password, with the current one",
      { endpoint: "/api/v1/auth/password", field: "password" },
    );
  }
  if (adminFields && !manages && !(self && s.all)) {
    throw new Forbidden(
      self
        ? "change your password at /api/v1/auth/password; other fields are set by an administrator"
        : "you may not change this account",
    );
  }
  if (input.isSuperAdmin !== undefined && !s.all)
    throw new Forbidden("only a super_admin grants or removes super_admin");
  if (self && (input.disabled === true || input.isSuperAdmin === false)) {
    throw new Conflict("you cannot disable your own account or remove your own super_admin role");
  }

  const changes: UserChanges = {};
  if (input.email !== undefined) changes.email = normalizeEmail(input.email);
  if (input.displayName !== undefined) changes.displayName = input.displayName;
  if (input.isSuperAdmin !== undefined) changes.isSuperAdmin = input.isSuperAdmin;
  if (input.disabled !== undefined && input.disabled !== user.disabled) {
    changes.disabled = input.disabled;
    if (input.disabled) changes.revokeTokens = true;
  }
  if (input.password !== undefined) {
    changes.passwordHash = await deps.auth.hasher.hash(input.password);
    changes.mustChangePassword = true;
    changes.revokeTokens = true;
  }
  const updated = await mapConstraintErrors(() => updateUserRow(deps.db, userId, changes), {
    unique: "a user with this email already exists",
    details: { field: "email" },
  });
  if (!updated) throw new NotFound("user", userId);
  return { user: updated, memberships };
}

/** The last enabled super_admin cannot go; neither can the caller itself. */
export async function deleteUser(deps: IdentityDeps, principal: Principal, userId: string): Promise<void> {
  const s = scopeOf(principal);
  const { user, memberships } = await getUser(deps, principal, userId);
  if (userId === s.userId) throw new Conflict("you cannot delete your own account");
  if (!canManageUser(s, user, memberships)) throw new Forbidden("you may not delete this account");
  if (user.is_super_admin && !user.disabled && (await countActiveSuperAdmins(deps.db)) <= 1) {
    throw new Conflict("the last super_admin cannot be deleted");
  }
  await mapConstraintErrors(() => deleteUserRow(deps.db, userId), {
    unique: "conflict",
    foreignKey: "the user still owns objects that refer to it; remove those first",
  });
}
