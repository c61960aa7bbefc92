// Audit rows for mutating calls. The route layer writes one row per request to a route with an `audit`
// action, after the answer is known, for success and for failure alike. Handlers only add what the layer
// cannot know: the target, the organization, a few details.
import type { Logger } from "pino";
import type { Db } from "../db/knex.ts";
import { type AuditRecord, insertAuditRecord } from "../db/operations/audit/insertAuditRecord.ts";
import type { Principal } from "../domain/identity/principal.ts";
import type { Metrics } from "./metrics.ts";

/** What a handler uses to name what it acted on. */
export interface AuditHandle {
  target(kind: string, id: string): void;
  organization(id: string): void;
  detail(key: string, value: unknown): void;
}

/** Collects what a handler names during a request; turned into a row when the answer is known. */
export class AuditCollector implements AuditHandle {
  targetKind: string | null = null;
  targetId: string | null = null;
  organizationId: string | null = null;
  details: Record<string, unknown> = {};
  target(kind: string, id: string): void {
    this.targetKind = kind;
    this.targetId = id;
  }
  organization(id: string): void {
    this.organizationId = id;
  }
  detail(key: string, value: unknown): void {
    this.details[key] = value;
  }
  record(opts: {
    action: string;
    principal: Principal | undefined;
    requestId: string;
    status: number;
    errorCode?: string;
    at: Date;
  }): AuditRecord {
    const details = opts.errorCode ? { ...this.details, error_code: opts.errorCode } : this.details;
    return {
      action: opts.action,
      actorKind: opts.principal ? "user" : "anonymous",
      actorId: opts.principal?.userId ?? null,
      organizationId: this.organizationId,
      targetKind: this.targetKind,
      targetId: this.targetId,
      requestId: opts.requestId,
      outcome: opts.status < 400 ? "success" : "failure",
      status: opts.status,
      details,
      at: opts.at,
    };
  }
}

/** A handle that ignores everything (GET routes, tests of handlers without a layer). */
export const noAudit: AuditHandle = { target: () => {}, organization: () => {}, detail: () => {} };

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
