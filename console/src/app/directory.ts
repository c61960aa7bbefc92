// Names for the ids the credits pages show (organizations, projects, people), from what the person may
// list. People's emails come from the member lists of the organizations they administer and of the
// projects they administer; anything else is shown as its id. Failures leave a name out, never the page.
import { ApiError } from "../api/client.ts";
import type { Directory } from "../data/credits.ts";
import { auth } from "./context.ts";
import { loadOrganizationMembers, loadOrganizations, loadProjectMembers, loadProjects } from "./organizations.ts";

/** `organizations`: whose members to name (default: those the person administers; super_admins: the first ten). */
export async function loadDirectory(
  opts: { organizations?: readonly string[]; signal?: AbortSignal } = {},
): Promise<Directory> {
  const { signal } = opts;
  const memberships = auth.me?.memberships ?? [];
  const optional = async <T>(p: Promise<T>): Promise<T | undefined> => {
    try {
      return await p;
    } catch (e) {
      if (e instanceof ApiError && (e.code === "forbidden" || e.code === "not_found")) return undefined;
      throw e;
    }
  };
  const [orgs, projects] = await Promise.all([loadOrganizations(signal), loadProjects(undefined, signal)]);
  const administered = memberships.filter((m) => m.role === "org_admin" && m.project_id === null);
  const mayList = (id: string) => auth.isSuperAdmin || administered.some((m) => m.organization_id === id);
  const adminOrgs = opts.organizations
    ? opts.organizations.filter(mayList)
    : auth.isSuperAdmin
      ? orgs.data.slice(0, 10).map((o) => o.id)
      : administered.map((m) => m.organization_id);
  const adminProjects = memberships.flatMap((m) => (m.role === "project_admin" && m.project_id ? [m.project_id] : []));
  const lists = await Promise.all([
    ...[...new Set(adminOrgs)].map((id) => optional(loadOrganizationMembers(id, signal))),
    ...[...new Set(adminProjects)].map((id) => optional(loadProjectMembers(id, signal))),
  ]);
  const users = new Map<string, string>();
  if (auth.userId && auth.email) users.set(auth.userId, auth.email);
  for (const l of lists) for (const m of l?.data ?? []) users.set(m.user_id, m.email);
  return {
    me: auth.userId,
    organizations: new Map(orgs.data.map((o) => [o.id, o.name])),
    projects: new Map(projects.data.map((p) => [p.id, p.name])),
    projectOrganizations: new Map(projects.data.map((p) => [p.id, p.organization_id])),
    users,
  };
}
