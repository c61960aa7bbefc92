import type { Knex } from "knex";

export async function countProjectsOfOrganization(db: Knex, organizationId: string): Promise<number> {
  const [r] = await db("projects")
    .where({ organization_id: organizationId })
    .count<{ count: string }[]>({ count: "*" });
  return Number(r?.count ?? 0);
}
