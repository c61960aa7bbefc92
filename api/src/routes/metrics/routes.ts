// /api/v1/metrics: the usage and chargeback report per organization and project (docs/dev/monitoring.md),
// as JSON or CSV. Scope follows the role; asking for more answers the scope (contract: Endpoints rule 1).
import { z } from "zod";
import { usageReport } from "../../domain/dashboard/usageReport.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentUsageCsv } from "./presenter.ts";
import { UsageReport, UsageReportQuery } from "./schemas.ts";

export const getUsageReport = defineRoute({
  method: "get",
  path: "/api/v1/metrics/usage",
  operationId: "getUsageReport",
  tags: ["monitoring"],
  summary: "GPU-hours and credits per organization and project over a range (chargeback), as JSON or CSV",
  description:
    "super_admin: every organization; organization and project admins: what they administer, plus their own sessions; anyone else: their own sessions. Credits are charges in the range less their reversals, in minor units. `from` after `to` or a range over 366 days is 400 validation_failed.",
  auth: "user",
  query: UsageReportQuery,
  produces: {
    "application/json": UsageReport,
    "text/csv": z
      .string()
      .meta({ description: "With format=csv: a header row, then one row per organization and project." }),
  },
  responses: { 200: UsageReport },
  handler: async ({ deps, principal, query }) => {
    const report = await usageReport(deps.db, principal, query.from, query.to);
    if (query.format === "csv")
      return {
        kind: "csv",
        filename: `usage-${report.from.slice(0, 10)}-${report.to.slice(0, 10)}.csv`,
        headerPresent: true,
        body: presentUsageCsv(report),
      };
    return { status: 200 as const, body: report };
  },
});

export const routes: RouteDef[] = [getUsageReport];
