import type { Knex } from "knex";

export async function countOrganizationAdmins(db: Knex, organizationId: string): Promise<number> {
  const [r] = await db("memberships")
    .where({ organization_id: organizationId, role: "org_admin" })
    .whereNull("project_id")
    .count<{ count: string }[]>({ count: "*" });
  return Number(r?.count ?? 0);
}
