import type { Knex } from "knex";

/**
 * Who looks after a project's volume when it fills: the project's administrators; a project with none has
 * its organization's administrators.
 */
export async function volumeStewards(db: Knex, at: { organizationId: string; projectId: string }): Promise<string[]> {
  const admins = async (where: Record<string, string>, orgLevel: boolean) => {
    const q = db("memberships").where(where);
    if (orgLevel) q.whereNull("project_id");
    return ((await q.distinct("user_id")) as { user_id: string }[]).map((r) => r.user_id);
  };
  const project = await admins({ project_id: at.projectId, role: "project_admin" }, false);
  if (project.length > 0) return project;
  return admins({ organization_id: at.organizationId, role: "org_admin" }, true);
}
