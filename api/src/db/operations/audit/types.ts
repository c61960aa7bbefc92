import type { AuditActorKind, AuditOutcome } from "./insertAuditRecord.ts";

export interface AuditRow {
  id: string;
  seq: string;
  at: Date;
  actor_kind: AuditActorKind;
  actor_id: string | null;
  actor_reason: string | null;
  organization_id: string | null;
  project_id: string | null;
  cluster_id: string | null;
  action: string;
  target_kind: string | null;
  target_id: string | null;
  request_id: string | null;
  source_ip: string | null;
  outcome: AuditOutcome;
  status: number | null;
  details: Record<string, unknown>;
  diff: Record<string, unknown> | null;
  prev_hash: string | null;
  hash: string;
}

/** A list's filters, already scoped: `organizations` undefined means every organization (super_admin). */
export interface AuditFilter {
  organizations?: readonly string[];
  from?: Date;
  to?: Date;
  actorId?: string;
  actorKind?: AuditActorKind;
  action?: string;
  actionPrefix?: string;
  targetKind?: string;
  targetId?: string;
  organizationId?: string;
  projectId?: string;
  clusterId?: string;
  outcome?: AuditOutcome;
}
