import type { Knex } from "knex";
import { type PageRows, type PageWindow, pageQuery } from "../../page.ts";
import type { SessionRow } from "./types.ts";

/** Who the caller may see: everything, or the union of own sessions, organizations and projects. */
export interface SessionVisibility {
  all: boolean;
  /** The caller's own sessions; when given, in these organizations only (those they are still a member of). */
  ownerId?: string;
  ownerOrganizationIds?: readonly string[];
  organizationIds?: readonly string[];
  projectIds?: readonly string[];
}

export type SessionFilter = {
  phases?: readonly string[];
  clusterId?: string;
  organizationId?: string;
  projectId?: string;
  ownerId?: string;
  /** Leave out sessions whose resource is gone (default: include them, they are history). */
  liveOnly?: boolean;
};

/** The filter, and the visibility under names of its own (the filter has an ownerId too). */
type SessionsPageParams = SessionFilter & {
  everyone: boolean;
  visibleOwnerId?: string;
  visibleOwnerOrganizationIds?: readonly string[];
  visibleOrganizationIds?: readonly string[];
  visibleProjectIds?: readonly string[];
};

// Compiled once per shape of its parameters (db/page.ts, pageQuery): it may read `p` only as values.
const sessionsPage = pageQuery<SessionRow, SessionsPageParams>("sessions", (db, p) => {
  const q = db("sessions").select("*");
  if (!p.everyone) {
    const { visibleOwnerId, visibleOwnerOrganizationIds, visibleOrganizationIds, visibleProjectIds } = p;
    q.where((w) => {
      if (visibleOwnerId)
        w.orWhere((o) => {
          o.where("owner_id", visibleOwnerId);
          if (visibleOwnerOrganizationIds) o.whereIn("organization_id", visibleOwnerOrganizationIds);
        });
      if (visibleOrganizationIds?.length) w.orWhereIn("organization_id", visibleOrganizationIds);
      if (visibleProjectIds?.length) w.orWhereIn("project_id", visibleProjectIds);
      if (!visibleOwnerId && !visibleOrganizationIds?.length && !visibleProjectIds?.length) w.whereRaw("false");
    });
  }
  if (p.phases?.length) q.whereIn("phase", p.phases);
  if (p.clusterId) q.where("cluster_id", p.clusterId);
  if (p.organizationId) q.where("organization_id", p.organizationId);
  if (p.projectId) q.where("project_id", p.projectId);
  if (p.ownerId) q.where("owner_id", p.ownerId);
  if (p.liveOnly) q.whereNull("resource_deleted_at");
  return q.orderBy([
    { column: "created_at", order: "desc" },
    { column: "id", order: "desc" },
  ]);
});

/** One page of the visible sessions, newest first, and their total. */
export function listSessionRows(
  db: Knex,
  v: SessionVisibility,
  f: SessionFilter,
  window: PageWindow,
): Promise<PageRows<SessionRow>> {
  return sessionsPage(
    db,
    {
      everyone: v.all,
      visibleOwnerId: v.ownerId || undefined,
      visibleOwnerOrganizationIds: v.ownerOrganizationIds,
      visibleOrganizationIds: v.organizationIds,
      visibleProjectIds: v.projectIds,
      phases: f.phases,
      clusterId: f.clusterId || undefined,
      organizationId: f.organizationId || undefined,
      projectId: f.projectId || undefined,
      ownerId: f.ownerId || undefined,
      liveOnly: f.liveOnly === true,
    },
    window,
  );
}
