// Memberships, as the /organizations/:id/members and /projects/:id/members sub-resources.
//   organization members (organization-level memberships, roles org_admin | member): read by anyone in
//   the organization, changed by its org_admins;
//   project members (roles project_admin | member): read by anyone who sees the project, changed by its
//   project_admins and the organization's org_admins.
// Adding someone who is already a member changes their role (created = false).

import { deleteMembership } from "../../db/operations/memberships/deleteMembership.ts";
import { deleteMembershipsInOrganization } from "../../db/operations/memberships/deleteMembershipsInOrganization.ts";
import { findMembership } from "../../db/operations/memberships/findMembership.ts";
import { listMembers } from "../../db/operations/memberships/listMembers.ts";
import type { MemberRow } from "../../db/operations/memberships/types.ts";
import { upsertMembership } from "../../db/operations/memberships/upsertMembership.ts";
import { findUserByEmail } from "../../db/operations/users/findUserByEmail.ts";
import { findUserById } from "../../db/operations/users/findUserById.ts";
import type { UserRow } from "../../db/operations/users/types.ts";
import type { Deps } from "../../deps.ts";
import { Forbidden, Invalid, NotFound } from "../../errors.ts";
import { giveWelcomeCredit, reportUnpaidWelcome } from "../credits/welcome.ts";
import { normalizeEmail } from "./email.ts";
import { getOrganization } from "./organizations.ts";
import type { Principal } from "./principal.ts";
import { getProject } from "./projects.ts";
import { canAdminOrganization, canManageProjectMembers, scopeOf } from "./scope.ts";

type IdentityDeps = Pick<Deps, "db">;

export interface MemberRef {
  userId?: string;
  email?: string;
}

async function resolveUser(deps: IdentityDeps, ref: MemberRef): Promise<UserRow> {
  if ((ref.userId === undefined) === (ref.email === undefined)) {
    throw new Invalid("name the member by user_id or by email, not both", [
      { path: ["body"], message: "exactly one of user_id and email", code: "custom" },
    ]);
  }
  // Exactly one is set (above); the last branch cannot be taken.
  const user =
    ref.userId !== undefined
      ? await findUserById(deps.db, ref.userId)
      : ref.email !== undefined
        ? await findUserByEmail(deps.db, normalizeEmail(ref.email))
        : undefined;
  if (!user) throw new NotFound("user", ref.userId ?? ref.email);
  return user;
}

async function memberRow(
  deps: IdentityDeps,
  organizationId: string,
  projectId: string | null,
  user: UserRow,
): Promise<MemberRow> {
  const m = await findMembership(deps.db, { userId: user.id, organizationId, projectId });
  if (!m) throw new NotFound("member", user.id);
  return { ...m, email: user.email, display_name: user.display_name };
}

export async function listOrganizationMembers(
  deps: IdentityDeps,
  principal: Principal,
  organizationId: string,
  page: { page: number; size: number },
) {
  await getOrganization(deps, principal, organizationId);
  return listMembers(deps.db, {
    organizationId,
    projectId: null,
    limit: page.size,
    offset: (page.page - 1) * page.size,
  });
}

/** A new member gets the organization's welcome credit (credits/welcome.ts) in the same transaction. */
export async function addOrganizationMember(
  deps: Pick<Deps, "db" | "clock">,
  principal: Principal,
  organizationId: string,
  input: MemberRef & { role: "org_admin" | "member" },
): Promise<{ member: MemberRow; created: boolean }> {
  await getOrganization(deps, principal, organizationId);
  if (!canAdminOrganization(scopeOf(principal), organizationId))
    throw new Forbidden("only the organization's admins change its members");
  const user = await resolveUser(deps, input);
  const at = deps.clock.now();
  const created = await deps.db.transaction(async (tx) => {
    const { created } = await upsertMembership(tx, {
      userId: user.id,
      organizationId,
      projectId: null,
      role: input.role,
    });
    if (created) {
      const welcome = await giveWelcomeCredit(tx, {
        organizationId,
        userId: user.id,
        actorKind: "user",
        actorId: principal.userId,
        at,
      });
      await reportUnpaidWelcome(tx, {
        adminId: principal.userId,
        organizationId,
        memberEmail: user.email,
        outcome: welcome,
        at,
      });
    }
    return created;
  });
  return { member: await memberRow(deps, organizationId, null, user), created };
}

/** Removes the user from the organization and from all of its projects. */
export async function removeOrganizationMember(
  deps: IdentityDeps,
  principal: Principal,
  organizationId: string,
  userId: string,
): Promise<void> {
  await getOrganization(deps, principal, organizationId);
  if (!canAdminOrganization(scopeOf(principal), organizationId))
    throw new Forbidden("only the organization's admins change its members");
  if ((await deleteMembershipsInOrganization(deps.db, userId, organizationId)) === 0)
    throw new NotFound("member", userId);
}

export async function listProjectMembers(
  deps: IdentityDeps,
  principal: Principal,
  projectId: string,
  page: { page: number; size: number },
) {
  const p = await getProject(deps, principal, projectId);
  return listMembers(deps.db, {
    organizationId: p.organization_id,
    projectId,
    limit: page.size,
    offset: (page.page - 1) * page.size,
  });
}

export async function addProjectMember(
  deps: IdentityDeps,
  principal: Principal,
  projectId: string,
  input: MemberRef & { role: "project_admin" | "member" },
): Promise<{ member: MemberRow; created: boolean }> {
  const p = await getProject(deps, principal, projectId);
  if (!canManageProjectMembers(scopeOf(principal), p))
    throw new Forbidden("only the project's admins change its members");
  const user = await resolveUser(deps, input);
  const { created } = await upsertMembership(deps.db, {
    userId: user.id,
    organizationId: p.organization_id,
    projectId,
    role: input.role,
  });
  return { member: await memberRow(deps, p.organization_id, projectId, user), created };
}

/** Removes the user from the project; answers the project's organization. */
export async function removeProjectMember(
  deps: IdentityDeps,
  principal: Principal,
  projectId: string,
  userId: string,
): Promise<{ organizationId: string }> {
  const p = await getProject(deps, principal, projectId);
  if (!canManageProjectMembers(scopeOf(principal), p))
    throw new Forbidden("only the project's admins change its members");
  if (!(await deleteMembership(deps.db, { userId, organizationId: p.organization_id, projectId })))
    throw new NotFound("member", userId);
  return { organizationId: p.organization_id };
}
