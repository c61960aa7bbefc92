// Which GPU series a caller may read. The API's relay stamps every forwarded series held by a session's
// pod with that session's `berth_session`, `berth_owner`, `berth_org` and `berth_project` (relay.ts); a
// caller's queries are then narrowed by selectors the metrics server applies to every selector of the
// query (`extra_filters[]`), so no panel and no raw query can widen past them:
//   super_admin   nothing narrowed (the fleet, every card, Berth's own processes)
//   org_admin     series of their organizations' sessions
//   project_admin series of their projects' sessions
//   anyone        series of their own sessions, in organizations they still belong to
// Series no session holds (an idle card, a node, a process) reach super_admins only.
import type { Principal } from "../identity/principal.ts";
import { scopeOf } from "../identity/scope.ts";

const quoteRe = (v: string): string => v.replace(/[\\^$.*+?()[\]{}|"]/g, (c) => `\\${c}`);
const anyOf = (ids: Iterable<string>): string => [...ids].map(quoteRe).join("|");
const quote = (v: string): string => JSON.stringify(v);

/** null: not narrowed; []: nothing visible. */
export function labelFiltersOf(p: Principal): string[] | null {
  if (p.isSuperAdmin) return null;
  const s = scopeOf(p);
  const out: string[] = [];
  if (s.organizations.size > 0) out.push(`{berth_owner=${quote(p.userId)},berth_org=~"${anyOf(s.organizations)}"}`);
  if (s.adminOrganizations.size > 0) out.push(`{berth_org=~"${anyOf(s.adminOrganizations)}"}`);
  if (s.adminProjects.size > 0) out.push(`{berth_project=~"${anyOf(s.adminProjects)}"}`);
  return out;
}

/** May run a raw query (still narrowed by labelFiltersOf): super_admin and organization admins. */
export function mayRunRawQuery(p: Principal): boolean {
  return p.isSuperAdmin || scopeOf(p).adminOrganizations.size > 0;
}
