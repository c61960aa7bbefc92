// RFC 4180 CSV of audit rows: CRLF line ends, a header row, fields quoted when they hold a comma, a quote
// or a line break (quotes doubled). A cell a spreadsheet would read as a formula (starting with = + - @,
// tab or CR) gets a leading apostrophe: spreadsheets show it as text, and the value stays readable.
import type { AuditRow } from "../../db/operations/audit/types.ts";

export const AUDIT_CSV_COLUMNS = [
  "seq",
  "at",
  "actor_kind",
  "actor_id",
  "actor_reason",
  "organization_id",
  "project_id",
  "cluster_id",
  "action",
  "target_kind",
  "target_id",
  "outcome",
  "status",
  "request_id",
  "source_ip",
  "details",
  "diff",
  "hash",
] as const;

const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  let s = typeof value === "string" ? value : value instanceof Date ? value.toISOString() : JSON.stringify(value);
  if (typeof value === "string" && FORMULA_START.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

export function csvHeader(): string {
  return `${AUDIT_CSV_COLUMNS.join(",")}\r\n`;
}

export function csvLine(r: AuditRow): string {
  const cells: unknown[] = [
    String(r.seq),
    new Date(r.at).toISOString(),
    r.actor_kind,
    r.actor_id,
    r.actor_reason,
    r.organization_id,
    r.project_id,
    r.cluster_id,
    r.action,
    r.target_kind,
    r.target_id,
    r.outcome,
    r.status === null ? null : String(r.status),
    r.request_id,
    r.source_ip,
    // JSON cells are strings too: a diff whose JSON starts with a formula character cannot, since JSON
    // starts with { or [; but they pass through the same escaping.
    JSON.stringify(r.details ?? {}),
    r.diff === null ? null : JSON.stringify(r.diff),
    r.hash,
  ];
  return `${cells.map(csvCell).join(",")}\r\n`;
}
