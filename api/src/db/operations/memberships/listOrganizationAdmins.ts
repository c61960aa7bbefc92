import type { Knex } from "knex";

/** The organization's administrators (organization-level org_admin memberships), by user id. */
export async function listOrganizationAdmins(db: Knex, organizationId: string): Promise<string[]> {
  const rows = (await db("memberships")
    .where({ organization_id: organizationId, role: "org_admin" })
    .whereNull("project_id")
    .distinct("user_id")
    .orderBy("user_id")) as { user_id: string }[];
  return rows.map((r) => r.user_id);
}
