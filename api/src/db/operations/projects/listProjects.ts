import type { Knex } from "knex";
import { selectPage } from "../../page.ts";
import type { ProjectRow, ProjectVisibility } from "./types.ts";

export interface ListProjectsQuery {
  /** Absent: every project (super_admin). */
  visibleTo?: ProjectVisibility;
  organizationId?: string;
  limit: number;
  offset: number;
}

export async function listProjects(db: Knex, q: ListProjectsQuery): Promise<{ rows: ProjectRow[]; total: number }> {
  const base = db<ProjectRow>("projects");
  const v = q.visibleTo;
  if (v) base.where((w) => w.whereIn("organization_id", v.organizationIds).orWhereIn("id", v.projectIds));
  if (q.organizationId) base.where("organization_id", q.organizationId);
  base.select("*").orderBy([{ column: "name" }, { column: "id" }]);
  return selectPage<ProjectRow>(db, base, q);
}
