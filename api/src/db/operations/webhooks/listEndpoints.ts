import type { Knex } from "knex";

/** Endpoints of the given organizations ("all": every one), newest first; for paginate(). */
export function endpointsQuery(db: Knex, organizations: "all" | string[], organizationId?: string): Knex.QueryBuilder {
  const q = db("webhook_endpoints")
    .select("*")
    .orderBy([
      { column: "created_at", order: "desc" },
      { column: "id", order: "desc" },
    ]);
  if (organizations !== "all") q.whereIn("organization_id", organizations);
  if (organizationId !== undefined) q.where({ organization_id: organizationId });
  return q;
}
