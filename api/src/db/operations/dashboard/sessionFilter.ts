// Which sessions a dashboard figure counts, built from the caller's role (domain/dashboard/summary.ts):
// everything, some organizations or projects, or one owner.
import type { Knex } from "knex";

export interface SessionFilter {
  all?: boolean;
  organizationIds?: readonly string[];
  projectIds?: readonly string[];
  ownerId?: string;
  /** With ownerId: only in these organizations (a member who left one no longer sees its sessions). */
  ownerOrganizationIds?: readonly string[];
  clusterId?: string;
}

/** Applies the filter to a query over `sessions` aliased `s`. */
export function whereVisible(q: Knex.QueryBuilder, f: SessionFilter): Knex.QueryBuilder {
  if (f.clusterId) q.where("s.cluster_id", f.clusterId);
  if (f.all) return q;
  return q.where((w) => {
    let any = false;
    if (f.ownerId) {
      any = true;
      w.orWhere((o) => {
        o.where("s.owner_id", f.ownerId as string);
        if (f.ownerOrganizationIds) o.whereIn("s.organization_id", [...f.ownerOrganizationIds]);
      });
    }
    if (f.organizationIds?.length) {
      any = true;
      w.orWhereIn("s.organization_id", [...f.organizationIds]);
    }
    if (f.projectIds?.length) {
      any = true;
      w.orWhereIn("s.project_id", [...f.projectIds]);
    }
    if (!any) w.whereRaw("false");
  });
}
