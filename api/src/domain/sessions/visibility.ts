// Who sees and who acts on a session. A session belongs to its owner while they are a member of its
// organization (removed from it, they no longer reach it: resuming would draw on the organization's
// wallets); the organization's admins and its project's admins see and manage it too; super_admin
// everything. Other members of the same organization see nothing of it (404, as if it did not exist).
import type { SessionVisibility } from "../../db/operations/sessions/listSessions.ts";
import type { Principal } from "../identity/principal.ts";
import { type Scope, scopeOf } from "../identity/scope.ts";

export interface SessionOwnership {
  owner_id: string;
  organization_id: string;
  project_id: string | null;
}

export function canSeeSession(p: Principal, s: SessionOwnership): boolean {
  return canSeeSessionIn(scopeOf(p), s);
}

/** The same rule for a scope already derived: a live stream asks it for every event (routes/sessions/stream.ts). */
export function canSeeSessionIn(scope: Scope, s: SessionOwnership): boolean {
  if (scope.all) return true;
  return (
    (s.owner_id === scope.userId && scope.organizations.has(s.organization_id)) ||
    scope.adminOrganizations.has(s.organization_id) ||
    (s.project_id !== null && scope.adminProjects.has(s.project_id))
  );
}

/** Acting (pause, resume, restart, terminate, priority) needs the same as seeing. */
export const canManageSession = canSeeSession;

/** Administrators of the session's organization (and super_admin): the ones who may raise priority freely and inspect resources. */
export function isSessionAdmin(p: Principal, s: SessionOwnership): boolean {
  if (p.isSuperAdmin) return true;
  return scopeOf(p).adminOrganizations.has(s.organization_id);
}

/**
 * `scope=mine`: own sessions. `scope=all`: everything the role reaches (super_admin: all; org admin:
 * their organizations; project admin: their projects; anyone: their own). Asking for more than the role
 * allows answers the role's scope, never 403 (docs/dev/identity.md).
 */
export function visibilityOf(p: Principal, scope: "mine" | "all"): SessionVisibility {
  const s = scopeOf(p);
  // Own sessions only in organizations the caller is still a member of (as canSeeSession; super_admin: all).
  const own = p.isSuperAdmin
    ? { ownerId: p.userId }
    : { ownerId: p.userId, ownerOrganizationIds: [...s.organizations] };
  if (scope === "mine") return { all: false, ...own };
  if (p.isSuperAdmin) return { all: true };
  return {
    all: false,
    ...own,
    organizationIds: [...s.adminOrganizations],
    projectIds: [...s.adminProjects],
  };
}
