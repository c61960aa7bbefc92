// What a caller may see and manage, derived from its Principal (memberships are read fresh from Postgres
// on every request by the authenticator, so a changed role applies at once).
//
// Roles:
//   super_admin      everything, everywhere.
//   org_admin        its organizations: the organization, all of its projects, their members and users.
//   project_admin    its projects: reads them and manages their members.
//   member           reads the organizations and projects it belongs to, and their member lists.
// An organization is visible to anyone with any membership in it (organization- or project-level);
// a project to the admins of its organization and to its own members.
import type { Principal } from "./principal.ts";

export const ROLES = ["org_admin", "project_admin", "member"] as const;
export type Role = (typeof ROLES)[number];

export interface Scope {
  userId: string;
  all: boolean;
  /** Organizations with any membership of the caller. */
  organizations: Set<string>;
  /** Organizations the caller administers. */
  adminOrganizations: Set<string>;
  /** Projects with a project-level membership of the caller. */
  projects: Set<string>;
  /** Projects the caller administers as project_admin. */
  adminProjects: Set<string>;
}

export function scopeOf(p: Principal): Scope {
  const s: Scope = {
    userId: p.userId,
    all: p.isSuperAdmin,
    organizations: new Set(),
    adminOrganizations: new Set(),
    projects: new Set(),
    adminProjects: new Set(),
  };
  for (const m of p.memberships) {
    s.organizations.add(m.organizationId);
    if (m.projectId === undefined) {
      if (m.role === "org_admin") s.adminOrganizations.add(m.organizationId);
    } else {
      s.projects.add(m.projectId);
      if (m.role === "project_admin") s.adminProjects.add(m.projectId);
    }
  }
  return s;
}

export function canSeeOrganization(s: Scope, organizationId: string): boolean {
  return s.all || s.organizations.has(organizationId);
}

export function canAdminOrganization(s: Scope, organizationId: string): boolean {
  return s.all || s.adminOrganizations.has(organizationId);
}

export function canSeeProject(s: Scope, p: { id: string; organization_id: string }): boolean {
  return s.all || s.adminOrganizations.has(p.organization_id) || s.projects.has(p.id);
}

export function canManageProjectMembers(s: Scope, p: { id: string; organization_id: string }): boolean {
  return s.all || s.adminOrganizations.has(p.organization_id) || s.adminProjects.has(p.id);
}

/** Anyone who can see a project can read its member list; anyone who can see an organization, its. */
export const canReadProjectMembers = canSeeProject;
export const canReadOrganizationMembers = canSeeOrganization;

/** Memberships of another user, as the checks below need them. */
export interface TargetMembership {
  organization_id: string;
  project_id: string | null;
}

/** Self, or someone with a membership in what the caller administers. */
export function canSeeUser(s: Scope, targetId: string, target: TargetMembership[]): boolean {
  if (s.all || targetId === s.userId) return true;
  return target.some(
    (m) => s.adminOrganizations.has(m.organization_id) || (m.project_id !== null && s.adminProjects.has(m.project_id)),
  );
}

/**
 * May change or delete another account: super_admin, or an org_admin when every membership of the target
 * lies in organizations the caller administers (an account shared with another organization belongs to
 * that one too, and only a super_admin changes it). Never a super_admin's account unless super_admin.
 */
export function canManageUser(
  s: Scope,
  target: { id: string; is_super_admin: boolean },
  memberships: TargetMembership[],
): boolean {
  if (s.all) return true;
  if (target.is_super_admin || target.id === s.userId) return false;
  return memberships.length > 0 && memberships.every((m) => s.adminOrganizations.has(m.organization_id));
}
