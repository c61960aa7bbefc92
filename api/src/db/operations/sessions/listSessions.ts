import type { Knex } from "knex";

/** Who the caller may see: everything, or the union of own sessions, organizations and projects. */
export interface SessionVisibility {
  all: boolean;
  ownerId?: string;
  organizationIds?: readonly string[];
  projectIds?: readonly string[];
}

export interface SessionFilter {
  phases?: readonly string[];
  clusterId?: string;
  organizationId?: string;
  projectId?: string;
  ownerId?: string;
  /** Leave out sessions whose resource is gone (default: include them, they are history). */
  liveOnly?: boolean;
}

/** The visible sessions as an ordered query (newest first); page it with http/paging.ts. */
export function sessionsQuery(db: Knex, v: SessionVisibility, f: SessionFilter = {}): Knex.QueryBuilder {
  const q = db("sessions").select("*");
  if (!v.all) {
    q.where((w) => {
      if (v.ownerId) w.orWhere("owner_id", v.ownerId);
      if (v.organizationIds?.length) w.orWhereIn("organization_id", v.organizationIds as string[]);
      if (v.projectIds?.length) w.orWhereIn("project_id", v.projectIds as string[]);
      if (!v.ownerId && !v.organizationIds?.length && !v.projectIds?.length) w.whereRaw("false");
    });
  }
  if (f.phases?.length) q.whereIn("phase", f.phases as string[]);
  if (f.clusterId) q.where("cluster_id", f.clusterId);
  if (f.organizationId) q.where("organization_id", f.organizationId);
  if (f.projectId) q.where("project_id", f.projectId);
  if (f.ownerId) q.where("owner_id", f.ownerId);
  if (f.liveOnly) q.whereNull("resource_deleted_at");
  return q.orderBy([
    { column: "created_at", order: "desc" },
    { column: "id", order: "desc" },
  ]);
}
