// The audit log (docs/dev/governance.md): the list, the CSV export and the chain's verification.
import { z } from "zod";
import { Pagination } from "../../db/paging.ts";
import { auditPage, EXACT_TOTAL_UP_TO, exportRows, prepareExport, verifyChain } from "../../domain/audit/auditLog.ts";
import { csvHeader, csvLine } from "../../domain/audit/csv.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { filterOf, presentAuditRow } from "./presenter.ts";
import { AuditChainVerdict, AuditLogEntry, ExportAuditLogsQuery, ListAuditLogsQuery } from "./schemas.ts";

const SCOPE =
  "A super_admin sees every row; an organization admin the rows of the organizations they administer; anyone else an empty list (the scope, not 403). Filters outside your scope match nothing.";

export const listAuditLogsRoute = defineRoute({
  method: "get",
  path: "/api/v1/audit-logs",
  operationId: "listAuditLogs",
  tags: ["audit-logs"],
  summary: "The audit log, newest first, with filters",
  description: `${SCOPE} Unknown query parameters and an inverted range are 400 validation_failed. \`action\` takes an exact action or a prefix ending in \`*\`. \`pagination.total\` is exact for the whole log and for filters matching up to ${EXACT_TOTAL_UP_TO.toLocaleString("en")} rows; beyond that it is Postgres' estimate and \`pagination.total_exact\` is false (counting a million rows per page would cost more than the page).`,
  auth: "user",
  query: ListAuditLogsQuery,
  responses: {
    200: z.object({
      data: z.array(AuditLogEntry),
      pagination: Pagination.extend({
        total_exact: z.boolean().meta({ description: "false: total is an estimate (more than 10,000 rows match)." }),
      }).meta({ id: "AuditPagination" }),
    }),
  },
  handler: async ({ deps, principal, query }) => {
    const { rows, total } = await auditPage(deps.db, principal, filterOf(query), query);
    return {
      status: 200,
      body: {
        data: rows.map(presentAuditRow),
        pagination: { page: query.page, size: query.size, total: total.total, total_exact: total.exact },
      },
    };
  },
});

export const exportAuditLogsRoute = defineRoute({
  method: "get",
  path: "/api/v1/audit-logs/export",
  operationId: "exportAuditLogs",
  tags: ["audit-logs"],
  summary: "The audit log as CSV (RFC 4180), streamed",
  description: `${SCOPE} \`from\` and \`to\` are required; a range longer than the bound (366 days by default) or more matching rows than the bound (1,000,000 by default) is refused with 422 export_too_large before any row is sent, its details giving the bounds. Times are UTC ISO-8601; cells a spreadsheet would take for a formula (starting with = + - @, tab or CR) carry a leading apostrophe. The export is itself audited (audit_log.export).`,
  auth: "user",
  query: ExportAuditLogsQuery,
  audit: "audit_log.export",
  errors: ["export_too_large"],
  produces: { "text/csv": z.string().meta({ description: "A header row, then one row per entry, newest first." }) },
  responses: { 200: z.string().meta({ description: "text/csv; a header row, then one row per entry, newest first." }) },
  handler: async ({ deps, principal, query, audit }) => {
    const filter = await prepareExport(
      deps.db,
      principal,
      { ...filterOf(query), from: query.from, to: query.to },
      deps.config.audit.export,
    );
    audit.detail("filter", { ...query, from: query.from.toISOString(), to: query.to.toISOString() });
    // The layer stops reading when the client goes away; what was sent goes into the audit row.
    async function* lines(): AsyncGenerator<string> {
      let rows = 0;
      let ended = false;
      try {
        yield csvHeader();
        for await (const batch of exportRows(deps.db, filter)) {
          let chunk = "";
          for (const r of batch) chunk += csvLine(r);
          yield chunk;
          rows += batch.length; // asked for more: this batch was written
        }
        ended = true;
      } catch (e) {
        ended = true;
        throw e;
      } finally {
        audit.detail("rows", rows);
        if (!ended) audit.detail("client_closed", true);
      }
    }
    return {
      kind: "csv",
      filename: `audit-log-${query.from.toISOString().slice(0, 10)}-${query.to.toISOString().slice(0, 10)}.csv`,
      headerPresent: true,
      body: lines(),
    };
  },
});

export const verifyAuditLogRoute = defineRoute({
  method: "get",
  path: "/api/v1/audit-logs/verify",
  operationId: "verifyAuditLog",
  tags: ["audit-logs"],
  summary: "Checks the hash chain; reports the first broken link",
  description:
    "super_admin only (it reads every organization's rows). Each row's hash covers its content and the hash of the row before; the answer names the first row whose hash, link or predecessor is wrong. Rows purged by retention are before `first_id`.",
  auth: "user",
  responses: { 200: AuditChainVerdict },
  handler: async ({ deps, principal }) => {
    const v = await verifyChain(deps.db, principal);
    return {
      status: 200,
      body: {
        valid: v.broken === null,
        checked: v.checked,
        first_id: v.firstSeq,
        last_id: v.lastSeq,
        first_broken: v.broken ? { id: v.broken.seq, problem: v.broken.problem } : null,
      },
    };
  },
});

export const routes: RouteDef[] = [listAuditLogsRoute, exportAuditLogsRoute, verifyAuditLogRoute];
