// The usage and chargeback report (GET /api/v1/metrics/usage, docs/dev/monitoring.md): GPU-hours and
// credits charged (reversals taken off) per organization and project over a range, from the ledger and
// the usage samples. Scope follows the role: super_admin everything; organization and project admins what
// they administer; anyone else their own sessions.
import type { Db } from "../../db/knex.ts";
import type { SessionFilter } from "../../db/operations/dashboard/sessionFilter.ts";
import { spendByProject } from "../../db/operations/dashboard/spendByProject.ts";
import { Invalid } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { scopeOf } from "../identity/scope.ts";

export const MAX_REPORT_DAYS = 366;

export function reportScope(p: Principal): SessionFilter {
  if (p.isSuperAdmin) return { all: true };
  const s = scopeOf(p);
  return {
    ownerId: p.userId,
    ownerOrganizationIds: [...s.organizations],
    organizationIds: [...s.adminOrganizations],
    projectIds: [...s.adminProjects],
  };
}

export async function usageReport(db: Db, p: Principal, from: Date, to: Date) {
  if (!(to > from))
    throw new Invalid("the range is empty or in the wrong order", [
      { path: ["query", "from"], message: "`from` must be before `to`", code: "range_order" },
    ]);
  if (to.getTime() - from.getTime() > MAX_REPORT_DAYS * 86_400_000)
    throw new Invalid("the range is too long", [
      { path: ["query", "from"], message: `a report covers at most ${MAX_REPORT_DAYS} days`, code: "range_too_long" },
    ]);
  const rows = await spendByProject(db, reportScope(p), from, to);
  const data = rows.map((r) => ({
    organization_id: r.organization_id,
    organization_name: r.organization_name,
    project_id: r.project_id,
    project_name: r.project_name,
    gpu_hours: Math.round((r.gpu_seconds / 3600) * 1000) / 1000,
    credits: r.spent,
  }));
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    data,
    totals: {
      gpu_hours: Math.round(data.reduce((a, r) => a + r.gpu_hours, 0) * 1000) / 1000,
      credits: data.reduce((a, r) => a + BigInt(r.credits), 0n).toString(),
    },
  };
}

const cell = (v: string): string => {
  // A spreadsheet would run a cell starting with = + - @ as a formula.
  const safe = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};

export function usageReportCsv(r: Awaited<ReturnType<typeof usageReport>>): string {
  // Names after the ids and at the end: a sheet made from the earlier columns keeps its references.
  const lines = ["organization_id,project_id,gpu_hours,credits_minor_units,from,to,organization_name,project_name"];
  for (const d of r.data)
    lines.push(
      [
        d.organization_id,
        d.project_id ?? "",
        String(d.gpu_hours),
        d.credits,
        r.from,
        r.to,
        d.organization_name ?? "",
        d.project_name ?? "",
      ]
        .map(cell)
        .join(","),
    );
  return `${lines.join("\r\n")}\r\n`;
}
