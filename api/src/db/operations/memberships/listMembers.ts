import type { Knex } from "knex";
import { pageQuery } from "../../page.ts";
import type { MemberRow } from "./types.ts";

export interface ListMembersQuery {
  organizationId: string;
  /** null: the organization-level memberships only. */
  projectId: string | null;
  limit: number;
  offset: number;
}

// Compiled once per shape of its parameters (db/page.ts, pageQuery): it may read `p` only as values.
const membersPage = pageQuery<MemberRow, { organizationId: string; projectId: string | null }>("members", (db, p) => {
  const base = db("memberships")
    .join("users", "users.id", "memberships.user_id")
    .where("memberships.organization_id", p.organizationId);
  if (p.projectId === null) base.whereNull("memberships.project_id");
  else base.where("memberships.project_id", p.projectId);
  // Emails are unique, so the order is total.
  return base.select("memberships.*", "users.email", "users.display_name").orderBy([{ column: "users.email" }]);
});

export async function listMembers(db: Knex, q: ListMembersQuery): Promise<{ rows: MemberRow[]; total: number }> {
  return membersPage(db, { organizationId: q.organizationId, projectId: q.projectId }, q);
}
