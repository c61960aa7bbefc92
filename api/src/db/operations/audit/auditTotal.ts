// The audit list's total without counting a million rows per page. Three ways, cheapest first:
// - no filter at all (a super_admin's whole log): the chain's seq has no gaps among kept rows (retention
//   purges only a prefix; verify reports a gap as tampering), so last - first + 1, two index probes;
// - a filter matching at most `cap` rows: counted exactly (an index-only count that stops at cap + 1);
// - more than that: the planner's estimate of the filter's rows (EXPLAIN, no execution), never below
//   cap + 1, and flagged as an estimate so the console says "about".
import type { Knex } from "knex";
import { whereAudit } from "./listAuditRecords.ts";
import type { AuditFilter } from "./types.ts";

export interface AuditTotal {
  total: number;
  exact: boolean;
}

const FILTER_KEYS: readonly (keyof AuditFilter)[] = [
  "organizations",
  "from",
  "to",
  "actorId",
  "actorKind",
  "action",
  "actionPrefix",
  "targetKind",
  "targetId",
  "organizationId",
  "projectId",
  "clusterId",
  "outcome",
];

export async function auditTotal(db: Knex, f: AuditFilter, cap: number): Promise<AuditTotal> {
  if (FILTER_KEYS.every((k) => f[k] === undefined)) {
    const r = (
      await db.raw(
        `SELECT (SELECT seq FROM audit_log ORDER BY seq DESC LIMIT 1) - (SELECT seq FROM audit_log ORDER BY seq LIMIT 1) + 1 AS n`,
      )
    ).rows[0] as { n: string | null };
    return { total: Number(r.n ?? 0), exact: true };
  }
  const capped = whereAudit(db("audit_log").select(db.raw("1")), f).limit(cap + 1);
  const row = (await db.from(capped.as("x")).count({ n: "*" }).first()) as { n: string | number } | undefined;
  const n = Number(row?.n ?? 0);
  if (n <= cap) return { total: n, exact: true };
  const { sql, bindings } = whereAudit(db("audit_log").select(db.raw("1")), f).toSQL();
  const plan = (await db.raw(`EXPLAIN (FORMAT JSON) ${sql}`, bindings as never[])).rows[0] as {
    "QUERY PLAN": { Plan: { "Plan Rows": number } }[];
  };
  const estimate = Math.round(plan["QUERY PLAN"][0]?.Plan["Plan Rows"] ?? 0);
  return { total: Math.max(estimate, cap + 1), exact: false };
}
