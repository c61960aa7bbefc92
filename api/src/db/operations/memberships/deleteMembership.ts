import type { Knex } from "knex";
import { identityChanged } from "../users/identityChanged.ts";
import type { MembershipKey } from "./upsertMembership.ts";

/** Removes one membership (organization-level when projectId is null). */
export async function deleteMembership(db: Knex, k: MembershipKey): Promise<boolean> {
  const q = db("memberships").where({ user_id: k.userId, organization_id: k.organizationId });
  if (k.projectId === null) q.whereNull("project_id");
  else q.where({ project_id: k.projectId });
  const deleted = (await q.del()) > 0;
  identityChanged(db, k.userId);
  return deleted;
}
