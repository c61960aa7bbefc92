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
  const q = db("quota_requests")
    .leftJoin("users", "users.id", "quota_requests.requester_id")
    .select("quota_requests.*", "users.email as requester_email");
  const decidable = (w: Knex.QueryBuilder) => {
    if (v.all) return w.whereRaw("true");
    w.whereRaw("false");
    if (v.organizationIds.length) w.orWhereIn("quota_requests.organization_id", v.organizationIds);
    if (v.projectIds.length)
      w.orWhere((p) => p.where("quota_requests.scope", "project").whereIn("quota_requests.project_id", v.projectIds));
    return w;
  };
  const requester = "quota_requests.requester_id";
  if (f.box === "mine") q.where(requester, v.userId);
  else if (f.box === "incoming") q.whereNot(requester, v.userId).where(decidable);
  else q.where((w) => w.where(requester, v.userId).orWhere(decidable));
  if (f.status) q.where("quota_requests.status", f.status);
  if (f.organizationId) q.where("quota_requests.organization_id", f.organizationId);
  return q.orderBy([
    { column: "quota_requests.created_at", order: "desc" },
    { column: "quota_requests.id", order: "desc" },
  ]);
}
