// One row of the append-only audit log (the route layer's per-request row, and the system's own actions).
import type { Db } from "../../knex.ts";

export interface AuditRecord {
  action: string;
  actorKind: "user" | "operator" | "system" | "anonymous";
  actorId: string | null;
  organizationId: string | null;
  targetKind: string | null;
  targetId: string | null;
  requestId: string;
  outcome: "success" | "failure";
  status: number;
  details: Record<string, unknown>;
  at: Date;
}

export async function insertAuditRecord(db: Db, r: AuditRecord): Promise<void> {
  await db("audit_log").insert({
    at: r.at,
    actor_id: r.actorId,
    actor_kind: r.actorKind,
    organization_id: r.organizationId,
    action: r.action,
    target_kind: r.targetKind,
    target_id: r.targetId,
    request_id: r.requestId,
    outcome: r.outcome,
    status: r.status,
    details: JSON.stringify(r.details),
  });
}
