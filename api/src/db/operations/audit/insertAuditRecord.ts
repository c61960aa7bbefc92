// One row of the append-only audit log (the route layer's per-request row, and the system's own actions).
// seq, prev_hash and hash are set by the database (migration 20261126000100): the chain is not ours to forge.
import type { Db } from "../../knex.ts";

export type AuditOutcome = "success" | "denied" | "failed";
export type AuditActorKind = "user" | "operator" | "system" | "anonymous";

export interface AuditRecord {
  action: string;
  /** user (actorId: the user), operator (actorId: the cluster), system (actorReason says why), anonymous. */
  actorKind: AuditActorKind;
  actorId: string | null;
  /** For the system: what made it act (billing, a refill schedule, retention). */
  actorReason?: string | null;
  organizationId: string | null;
  projectId?: string | null;
  clusterId?: string | null;
  targetKind: string | null;
  targetId: string | null;
  requestId: string;
  /** The caller's address as the API saw it (behind a proxy: what the proxy forwarded). */
  sourceIp?: string | null;
  outcome: AuditOutcome;
  status: number;
  details: Record<string, unknown>;
  /** What changed, already redacted (domain/audit/redact.ts). */
  diff?: Record<string, unknown> | null;
  at: Date;
}

export async function insertAuditRecord(db: Db, r: AuditRecord): Promise<void> {
  await db("audit_log").insert({
    at: r.at,
    actor_id: r.actorId,
    actor_kind: r.actorKind,
    actor_reason: r.actorReason ?? null,
    organization_id: r.organizationId,
    project_id: r.projectId ?? null,
    cluster_id: r.clusterId ?? null,
    action: r.action,
    target_kind: r.targetKind,
    target_id: r.targetId,
    request_id: r.requestId,
    source_ip: r.sourceIp ?? null,
    outcome: r.outcome,
    status: r.status,
    details: JSON.stringify(r.details),
    diff: r.diff === undefined || r.diff === null ? null : JSON.stringify(r.diff),
  });
}
