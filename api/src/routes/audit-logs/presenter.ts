import type { AuditFilter, AuditRow } from "../../db/operations/audit/types.ts";
import { isoTimestamp } from "../../http/timestamp.ts";
import type { AuditLogEntry, ExportAuditLogsQuery, ListAuditLogsQuery } from "./schemas.ts";

export function presentAuditRow(r: AuditRow): AuditLogEntry {
  return {
    id: String(r.seq),
    at: isoTimestamp(r.at),
    actor: { kind: r.actor_kind, id: r.actor_id, reason: r.actor_reason },
    action: r.action,
    outcome: r.outcome,
    status: r.status,
    resource: { type: r.target_kind, id: r.target_id },
    organization_id: r.organization_id,
    project_id: r.project_id,
    cluster_id: r.cluster_id,
    request_id: r.request_id,
    source_ip: r.source_ip,
    details: r.details ?? {},
    diff: r.diff,
    hash: r.hash,
    prev_hash: r.prev_hash,
  };
}

/** The query's filters in the domain's words (before scoping). */
export function filterOf(q: ListAuditLogsQuery | ExportAuditLogsQuery): Omit<AuditFilter, "organizations"> {
  const prefix = q.action?.endsWith("*") ? q.action.slice(0, -1) : undefined;
  return {
    ...(q.from ? { from: q.from } : {}),
    ...(q.to ? { to: q.to } : {}),
    ...(q.actor ? { actorId: q.actor } : {}),
    ...(q.actor_kind ? { actorKind: q.actor_kind } : {}),
    ...(q.action && prefix === undefined ? { action: q.action } : {}),
    ...(prefix !== undefined && prefix !== "" ? { actionPrefix: prefix } : {}),
    ...(q.resource_type ? { targetKind: q.resource_type } : {}),
    ...(q.resource_id ? { targetId: q.resource_id } : {}),
    ...(q.organization ? { organizationId: q.organization } : {}),
    ...(q.project ? { projectId: q.project } : {}),
    ...(q.cluster ? { clusterId: q.cluster } : {}),
    ...(q.outcome ? { outcome: q.outcome } : {}),
  };
}
