// The audit log as read by people: the list, the CSV export and the chain's verification. Scope, not
// 403: a super_admin reads every row, an organization admin the rows of the organizations they
// administer, anyone else nothing (an empty list). The export is bounded (range and rows) so one request
// cannot hold the database for an hour, and it is itself audited (by the route layer, as audit_log.export).
import type { Knex } from "knex";
import { type AuditTotal, auditTotal } from "../../db/operations/audit/auditTotal.ts";
import { auditBatch, auditListQuery, countAuditRecords } from "../../db/operations/audit/listAuditRecords.ts";
import type { AuditFilter, AuditRow } from "../../db/operations/audit/types.ts";
import { type ChainVerdict, verifyAuditChain } from "../../db/operations/audit/verifyAuditChain.ts";
import { DomainError, Forbidden } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";

export interface AuditExportBounds {
  /** Longest range one export may cover, in days. */
  maxDays: number;
  /** Most rows one export may hold. */
  maxRows: number;
}

export const DEFAULT_EXPORT_BOUNDS: AuditExportBounds = { maxDays: 366, maxRows: 1_000_000 };

/** The organizations whose rows the caller may read; undefined: all of them (super_admin). */
export function auditScope(p: Principal): readonly string[] | undefined {
  if (p.isSuperAdmin) return undefined;
  return [...new Set(p.memberships.filter((m) => m.role === "org_admin" && !m.projectId).map((m) => m.organizationId))];
}

export function scoped(p: Principal, f: Omit<AuditFilter, "organizations">): AuditFilter {
  const organizations = auditScope(p);
  return organizations === undefined ? f : { ...f, organizations };
}

/** Up to this many matching rows the list's total is counted exactly; beyond, it is the planner's estimate. */
export const EXACT_TOTAL_UP_TO = 10_000;

/** One page of the caller's scope, newest first, and its total (exact or estimated: auditTotal.ts). */
export async function auditPage(
  db: Knex,
  p: Principal,
  f: Omit<AuditFilter, "organizations">,
  page: { page: number; size: number },
): Promise<{ rows: AuditRow[]; total: AuditTotal }> {
  const filter = scoped(p, f);
  const [rows, total] = await Promise.all([
    auditListQuery(db, filter)
      .limit(page.size)
      .offset((page.page - 1) * page.size) as Promise<AuditRow[]>,
    auditTotal(db, filter, EXACT_TOTAL_UP_TO),
  ]);
  return { rows, total };
}

/**
 * Checks an export's bounds before any row is sent (a refusal after the header row would be a truncated
 * file nobody notices). Returns the scoped filter.
 */
export async function prepareExport(
  db: Knex,
  p: Principal,
  f: Omit<AuditFilter, "organizations"> & { from: Date; to: Date },
  bounds: AuditExportBounds,
): Promise<AuditFilter> {
  const days = (f.to.getTime() - f.from.getTime()) / 86_400_000;
  if (days > bounds.maxDays)
    throw new DomainError(
      "export_too_large",
      `an export covers at most ${bounds.maxDays} days; this one asks for ${Math.ceil(days)}: narrow from/to`,
      { max_days: bounds.maxDays, asked_days: Math.ceil(days) },
    );
  const filter = scoped(p, f);
  const n = await countAuditRecords(db, filter, bounds.maxRows);
  if (n > bounds.maxRows)
    throw new DomainError(
      "export_too_large",
      `an export holds at most ${bounds.maxRows} rows; this one matches more: narrow the range or add filters`,
      { max_rows: bounds.maxRows, matched_rows_at_least: n },
    );
  return filter;
}

/** The export's rows, newest first, in keyset batches (constant memory whatever the count). */
export async function* exportRows(db: Knex, filter: AuditFilter, batch = 2000): AsyncGenerator<AuditRow[]> {
  let before: string | undefined;
  for (;;) {
    const rows = await auditBatch(db, filter, before, batch);
    if (rows.length > 0) yield rows;
    if (rows.length < batch) return;
    before = String(rows[rows.length - 1]?.seq);
  }
}

/** Verifying reads every organization's rows: super_admins only. */
export async function verifyChain(db: Knex, p: Principal): Promise<ChainVerdict> {
  if (!p.isSuperAdmin) throw new Forbidden("only a super_admin may verify the whole audit chain");
  return verifyAuditChain(db);
}
