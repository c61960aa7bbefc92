import type { Knex } from "knex";
import type { MembershipRow } from "./types.ts";

/** `projectId` null: the organization-level membership. */
export async function findMembership(
  db: Knex,
  k: { userId: string; organizationId: string; projectId: string | null },
): Promise<MembershipRow | undefined> {
  const q = db<MembershipRow>("memberships").where({ user_id: k.userId, organization_id: k.organizationId });
  if (k.projectId === null) q.whereNull("project_id");
  else q.where({ project_id: k.projectId });
  return q.first();
}
