import type { Knex } from "knex";
import type { MemberRow } from "./types.ts";

export interface ListMembersQuery {
  organizationId: string;
  /** null: the organization-level memberships only. */
  projectId: string | null;
  limit: number;
  offset: number;
}

export async function listMembers(db: Knex, q: ListMembersQuery): Promise<{ rows: MemberRow[]; total: number }> {
  const base = db("memberships").join("users", "users.id", "memberships.user_id").where("memberships.organization_id", q.organizationId);
  if (q.projectId === null) base.whereNull("memberships.project_id");
  else base.where("memberships.project_id", q.projectId);
  const [count] = await base.clone().count<{ count: string }[]>({ count: "*" });
  const rows = (await base
    .select("memberships.*", "users.email", "users.display_name")
    .orderBy([{ column: "users.email" }])
    .limit(q.limit)
    .offset(q.offset)) as MemberRow[];
  return { rows, total: Number(count?.count ?? 0) };
}
