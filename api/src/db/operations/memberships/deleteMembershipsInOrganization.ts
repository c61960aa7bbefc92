import type { Knex } from "knex";

/** Removing someone from an organization removes them from its projects too. */
export async function deleteMembershipsInOrganization(db: Knex, userId: string, organizationId: string): Promise<number> {
  return db("memberships").where({ user_id: userId, organization_id: organizationId }).del();
}
