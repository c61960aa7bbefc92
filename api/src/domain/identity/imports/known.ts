// What an import reads up front, in a few queries for the whole file (in chunks): the organizations and
// projects its rows name, and what the file's people already have (accounts, memberships, the ledger keys
// of their initial and welcome credits). A row already as it says costs nothing more (rowRules.ts
// unchanged), and the dry run plays the rows on it without reading again (dryWorld.ts).
import type { Knex } from "knex";
import type { UserRow } from "../../../db/operations/users/types.ts";
import { welcomeKey } from "../../credits/welcome.ts";
import type { CheckedRow } from "./rows.ts";

export interface Org {
  id: string;
  slug: string;
  name: string;
}
export interface Project {
  id: string;
  name: string;
  organization_id: string;
}

/** What the file's people already have: their accounts, memberships and the import's ledger keys. */
export interface Known {
  users: Map<string, UserRow>;
  /** `<user>/<organization>/<project or "">` → role */
  roles: Map<string, string>;
  keys: Set<string>;
}

export const roleKey = (userId: string, organizationId: string, projectId: string | null) =>
  `${userId}/${organizationId}/${projectId ?? ""}`;
export const initialKey = (organizationId: string, userId: string) => `import:initial:${organizationId}:${userId}`;

/** The organization a row names, by id or slug. */
export const orgOf = (orgs: Map<string, Org>, ref: string): Org | undefined =>
  orgs.get(ref) ?? orgs.get(ref.toLowerCase());

/** The organizations (by id and by slug) and their projects that the file's rows name. */
export async function resolveNames(db: Knex, checked: CheckedRow[]) {
  const orgRefs = [...new Set(checked.flatMap((c) => (c.ok && c.row.organization ? [c.row.organization] : [])))];
  const orgRows: Org[] =
    orgRefs.length === 0
      ? []
      : await db("organizations")
          .whereIn("id", orgRefs)
          .orWhereIn(
            "slug",
            orgRefs.map((r) => r.toLowerCase()),
          )
          .select("id", "slug", "name");
  const orgs = new Map<string, Org>();
  for (const o of orgRows) {
    orgs.set(o.id, o);
    orgs.set(o.slug, o);
  }
  const orgIds = [...new Set(orgRows.map((o) => o.id))];
  const projects: Project[] =
    orgIds.length === 0
      ? []
      : await db("projects").whereIn("organization_id", orgIds).select("id", "name", "organization_id");
  return { orgs, projects };
}

/**
 * A few queries for the whole file (in chunks), so that a row already as it says costs nothing more, and
 * so that the dry run has all it needs to play the rows out without reading again (DryWorld).
 */
export async function whatExists(db: Knex, checked: CheckedRow[], orgs: Map<string, Org>): Promise<Known> {
  const rows = checked.flatMap((c) => (c.ok ? [c.row] : []));
  const known: Known = { users: new Map(), roles: new Map(), keys: new Set() };
  for (let i = 0; i < rows.length; i += 1000) {
    const chunk = rows.slice(i, i + 1000);
    const users = (await db("users").whereIn(
      "email",
      chunk.map((r) => r.email),
    )) as UserRow[];
    for (const u of users) known.users.set(u.email, u);
    const ids = users.map((u) => u.id);
    if (ids.length === 0) continue;
    const ms = await db("memberships")
      .whereIn("user_id", ids)
      .select("user_id", "organization_id", "project_id", "role");
    for (const m of ms) known.roles.set(roleKey(m.user_id, m.organization_id, m.project_id), m.role);
    // The keys that make initial and welcome credits once, for each existing person and the row's organization.
    const wanted = chunk.flatMap((r) => {
      const u = known.users.get(r.email);
      const org = r.organization === null ? undefined : orgOf(orgs, r.organization);
      return u && org ? [initialKey(org.id, u.id), welcomeKey(org.id, u.id)] : [];
    });
    if (wanted.length === 0) continue;
    const keys = await db("ledger_transactions").whereIn("idempotency_key", wanted).pluck("idempotency_key");
    for (const k of keys) known.keys.add(k);
  }
  return known;
}
