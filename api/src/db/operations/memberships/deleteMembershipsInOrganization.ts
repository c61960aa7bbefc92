import type { Knex } from "knex";
import { identityChanged } from "../users/identityChanged.ts";

/** Removing someone from an organization removes them from its projects too. */
export async function deleteMembershipsInOrganization(
  db: Knex,
  userId: string,
  organizationId: string,
): Promise<number> {
  const n = await db("memberships").where({ user_id: userId, organization_id: organizationId }).del();
  identityChanged(db, userId);
  return n;
}
