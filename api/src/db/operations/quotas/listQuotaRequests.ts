import type { Knex } from "knex";

/** What a caller may see: their own requests, and those they may decide. */
export interface QuotaRequestVisibility {
  all: boolean;
  userId: string;
  /** Organizations the caller administers: every request there. */
  organizationIds: string[];
  /** Projects the caller administers: the project-scoped requests there. */
  projectIds: string[];
}

export interface QuotaRequestFilter {
  /** mine: asked by the caller; incoming: asked by others, for the caller to decide. */
  box?: "mine" | "incoming";
  status?: string;
  organizationId?: string;
}

export function quotaRequestsQuery(db: Knex, v: QuotaRequestVisibility, f: QuotaRequestFilter): Knex.QueryBuilder {
  const q = db("quota_requests").select("*");
  const decidable = (w: Knex.QueryBuilder) => {
    if (v.all) return w.whereRaw("true");
    w.whereRaw("false");
    if (v.organizationIds.length) w.orWhereIn("organization_id", v.organizationIds);
    if (v.projectIds.length) w.orWhere((p) => p.where("scope", "project").whereIn("project_id", v.projectIds));
    return w;
  };
  if (f.box === "mine") q.where("requester_id", v.userId);
  else if (f.box === "incoming") q.whereNot("requester_id", v.userId).where(decidable);
  else q.where((w) => w.where("requester_id", v.userId).orWhere(decidable));
  if (f.status) q.where("status", f.status);
  if (f.organizationId) q.where("organization_id", f.organizationId);
  return q.orderBy([
    { column: "created_at", order: "desc" },
    { column: "id", order: "desc" },
  ]);
}
