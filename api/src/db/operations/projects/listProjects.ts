import type { Knex } from "knex";
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
  const [count] = await base.clone().count<{ count: string }[]>({ count: "*" });
  const rows = (await base
    .select("*")
    .orderBy([{ column: "name" }, { column: "id" }])
    .limit(q.limit)
    .offset(q.offset)) as ProjectRow[];
  return { rows, total: Number(count?.count ?? 0) };
}
