import type { Knex } from "knex";
import { selectPage } from "../../page.ts";
import type { MemberRow } from "./types.ts";

export interface ListMembersQuery {
  organizationId: string;
  /** null: the organization-level memberships only. */
  projectId: string | null;
  limit: number;
  offset: number;
}

export async function listMembers(db: Knex, q: ListMembersQuery): Promise<{ rows: MemberRow[]; total: number }> {
  const base = db("memberships")
    .join("users", "users.id", "memberships.user_id")
    .where("memberships.organization_id", q.organizationId);
  if (q.projectId === null) base.whereNull("memberships.project_id");
  else base.where("memberships.project_id", q.projectId);
  // Emails are unique, so the order is total.
  base.select("memberships.*", "users.email", "users.display_name").orderBy([{ column: "users.email" }]);
  return selectPage<MemberRow>(db, base, q);
}
