import type { Knex } from "knex";

/**
 * Who may decide a request, to notify them: the organization's org_admins and, for a project-scoped
 * request, the project's project_admins (super_admins see every request in their inbox but are not
 * notified of each: on a large platform that would be every request).
 */
export async function listDeciders(
  db: Knex,
  at: { organizationId: string; projectId: string | null },
): Promise<string[]> {
  const rows = (await db("memberships")
    .where((w) => {
      w.where({ organization_id: at.organizationId, role: "org_admin" }).whereNull("project_id");
      if (at.projectId) w.orWhere({ project_id: at.projectId, role: "project_admin" });
    })
    .distinct("user_id")) as { user_id: string }[];
  return rows.map((r) => r.user_id);
}
