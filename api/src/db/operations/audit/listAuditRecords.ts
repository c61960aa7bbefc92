// The audit list and the export's reads: newest first by seq (the chain's order). The export pages by
// keyset (seq below the last one sent) so a million rows stream in constant memory.
import type { Knex } from "knex";
import type { AuditFilter, AuditRow } from "./types.ts";

/** The filter as a WHERE clause on audit_log; an empty organization scope matches nothing. */
export function whereAudit(q: Knex.QueryBuilder, f: AuditFilter): Knex.QueryBuilder {
  if (f.organizations !== undefined) {
    if (f.organizations.length === 0) q.whereRaw("false");
    else q.whereIn("organization_id", f.organizations as string[]);
  }
  if (f.from) q.where("at", ">=", f.from);
  if (f.to) q.where("at", "<", f.to);
  if (f.actorId !== undefined) q.where("actor_id", f.actorId);
  if (f.actorKind !== undefined) q.where("actor_kind", f.actorKind);
  if (f.action !== undefined) q.where("action", f.action);
  if (f.actionPrefix !== undefined) q.where("action", "like", `${f.actionPrefix.replace(/[\\%_]/g, "\\$&")}%`);
  if (f.targetKind !== undefined) q.where("target_kind", f.targetKind);
  if (f.targetId !== undefined) q.where("target_id", f.targetId);
  if (f.organizationId !== undefined) q.where("organization_id", f.organizationId);
  if (f.projectId !== undefined) q.where("project_id", f.projectId);
  if (f.clusterId !== undefined) q.where("cluster_id", f.clusterId);
  if (f.outcome !== undefined) q.where("outcome", f.outcome);
  return q;
}

export function auditListQuery(db: Knex, f: AuditFilter): Knex.QueryBuilder {
  return whereAudit(db("audit_log").select("*"), f).orderBy("seq", "desc");
}

/** How many rows the filter matches, counting at most `cap + 1` (the export's bound needs no exact total). */
export async function countAuditRecords(db: Knex, f: AuditFilter, cap: number): Promise<number> {
  const inner = whereAudit(db("audit_log").select(db.raw("1")), f).limit(cap + 1);
  const row = (await db.from(inner.as("x")).count({ n: "*" }).first()) as { n: string | number } | undefined;
  return Number(row?.n ?? 0);
}

/** One keyset page for the export: rows with seq below `beforeSeq` (all when undefined), newest first. */
export async function auditBatch(
  db: Knex,
  f: AuditFilter,
  beforeSeq: string | undefined,
  limit: number,
): Promise<AuditRow[]> {
  const q = whereAudit(db("audit_log").select("*"), f);
  if (beforeSeq !== undefined) q.where("seq", "<", beforeSeq);
  return (await q.orderBy("seq", "desc").limit(limit)) as AuditRow[];
}
