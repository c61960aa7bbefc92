import type { Knex } from "knex";
import type { SessionVisibility } from "./listSessions.ts";

/**
 * Queued sessions with their live position: 1-based among the sessions waiting for the same GPU model,
 * by priority (higher first) then age (older first) — the order placement uses. Positions are computed
 * over the whole queue, then filtered to what the caller may see.
 */
export function queueQuery(
  db: Knex,
  v: SessionVisibility,
  f: { gpuModel?: string; clusterId?: string } = {},
): Knex.QueryBuilder {
  const ranked = db("sessions")
    .where("phase", "Queued")
    .select(
      "*",
      db.raw(
        "row_number() OVER (PARTITION BY gpu_model ORDER BY priority DESC, coalesce(queued_at, created_at) ASC, namespace ASC, cr_name ASC)::int AS live_position",
      ),
    )
    .as("q");
  const q = db.from(ranked).select("*");
  if (!v.all) {
    q.where((w) => {
      if (v.ownerId)
        w.orWhere((o) => {
          o.where("owner_id", v.ownerId as string);
          if (v.ownerOrganizationIds) o.whereIn("organization_id", v.ownerOrganizationIds as string[]);
        });
      if (v.organizationIds?.length) w.orWhereIn("organization_id", v.organizationIds as string[]);
      if (v.projectIds?.length) w.orWhereIn("project_id", v.projectIds as string[]);
      if (!v.ownerId && !v.organizationIds?.length && !v.projectIds?.length) w.whereRaw("false");
    });
  }
  if (f.gpuModel) q.where("gpu_model", f.gpuModel);
  if (f.clusterId) q.where("cluster_pin", f.clusterId);
  return q.orderBy([{ column: "gpu_model" }, { column: "live_position" }]);
}
