import type { Knex } from "knex";
import { pageQuery } from "../../page.ts";
import type { ProjectRow, ProjectVisibility } from "./types.ts";

export interface ListProjectsQuery {
  /** Absent: every project (super_admin). */
  visibleTo?: ProjectVisibility;
  organizationId?: string;
  limit: number;
  offset: number;
}

type ProjectsPageParams = {
  visibleOrganizationIds?: readonly string[];
  visibleProjectIds?: readonly string[];
  organizationId?: string;
};

// Compiled once per shape of its parameters (db/page.ts, pageQuery): it may read `p` only as values.
const projectsPage = pageQuery<ProjectRow, ProjectsPageParams>("projects", (db, p) => {
  const base = db<ProjectRow>("projects");
  const { visibleOrganizationIds, visibleProjectIds = [] } = p;
  if (visibleOrganizationIds)
    base.where((w) => w.whereIn("organization_id", visibleOrganizationIds).orWhereIn("id", visibleProjectIds));
  if (p.organizationId) base.where("organization_id", p.organizationId);
  return base.select("*").orderBy([{ column: "name" }, { column: "id" }]);
});

export async function listProjects(db: Knex, q: ListProjectsQuery): Promise<{ rows: ProjectRow[]; total: number }> {
  const v = q.visibleTo;
  return projectsPage(
    db,
    {
      visibleOrganizationIds: v?.organizationIds,
      visibleProjectIds: v?.projectIds,
      organizationId: q.organizationId || undefined,
    },
    q,
  );
}
