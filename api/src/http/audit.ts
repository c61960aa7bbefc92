// Audit rows for mutating calls. The route layer writes one row per request to a route with an `audit`
// action, after the answer is known, for success and for failure alike. Handlers only add what the layer
// cannot know: the target, the organization, a few details.
import type { Logger } from "pino";
import type { Db } from "../db/knex.ts";
import { type AuditRecord, insertAuditRecord } from "../db/operations/audit/insertAuditRecord.ts";
import { auditDiff, outcomeOf } from "../domain/audit/redact.ts";
import type { Principal } from "../domain/identity/principal.ts";
import type { Metrics } from "./metrics.ts";

/** What a handler uses to name what it acted on. */
export interface AuditHandle {
  target(kind: string, id: string): void;
  organization(id: string): void;
  project(id: string): void;
  cluster(id: string): void;
  detail(key: string, value: unknown): void;
  /** What changed (redacted before it is stored); without it the row keeps the request body as `after`. */
  change(before: unknown, after: unknown): void;
}

/** Collects what a handler names during a request; turned into a row when the answer is known. */
export class AuditCollector implements AuditHandle {
  targetKind: string | null = null;
  targetId: string | null = null;
  organizationId: string | null = null;
  projectId: string | null = null;
  clusterId: string | null = null;
  details: Record<string, unknown> = {};
  diff: Record<string, unknown> | null = null;
  /** The parsed request body (set by the route layer): the default `after` of the diff. */
  requestBody: unknown;
  target(kind: string, id: string): void {
    this.targetKind = kind;
    this.targetId = id;
  }
  organization(id: string): void {
    this.organizationId = id;
  }
  project(id: string): void {
    this.projectId = id;
  }
  cluster(id: string): void {
    this.clusterId = id;
  }
  change(before: unknown, after: unknown): void {
    this.diff = auditDiff(before, after);
  }
  detail(key: string, value: unknown): void {
    this.details[key] = value;
  }
  record(opts: {
    action: string;
    principal: Principal | undefined;
    requestId: string;
    sourceIp?: string;
    status: number;
    errorCode?: string;
    at: Date;
  }): AuditRecord {
    const details = opts.errorCode ? { ...this.details, error_code: opts.errorCode } : this.details;
    const targetIs = (kind: string) => (this.targetKind === kind ? this.targetId : null);
    return {
      action: opts.action,
      actorKind: opts.principal ? "user" : "anonymous",
      actorId: opts.principal?.userId ?? null,
      organizationId: this.organizationId ?? targetIs("organization"),
      projectId: this.projectId ?? targetIs("project"),
      clusterId: this.clusterId ?? targetIs("cluster"),
      targetKind: this.targetKind,
      targetId: this.targetId,
      requestId: opts.requestId,
      sourceIp: opts.sourceIp ?? null,
      outcome: outcomeOf(opts.status),
      status: opts.status,
      details,
      diff: this.diff ?? (this.requestBody === undefined ? null : auditDiff(undefined, this.requestBody)),
      at: opts.at,
    };
  }
}

/** A handle that ignores everything (GET routes, tests of handlers without a layer). */
export const noAudit: AuditHandle = {
  target: () => {},
  organization: () => {},
  project: () => {},
  cluster: () => {},
  detail: () => {},
  change: () => {},
};

/**
 * Writes the row. The answer has been decided (and a success has been committed) by now, so a failed
 * audit write must not turn it into an error: it is logged at error level and counted
 * (berth_audit_write_failures_total) for alerting instead.
 */
export async function writeAudit(deps: { db: Db; log: Logger; metrics: Metrics }, r: AuditRecord): Promise<void> {
  try {
    await insertAuditRecord(deps.db, r);
  } catch (err) {
    deps.metrics.auditWriteFailures.inc();
    deps.log.error(
      { err, audit: { action: r.action, requestId: r.requestId, outcome: r.outcome } },
      "audit row not written",
    );
  }
}
