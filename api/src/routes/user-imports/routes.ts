// Bulk user import: a dry run first, then the import; each run's results stay readable and downloadable
// by whoever ran it (and super_admins). docs/dev/identity.md, "Bulk import".
import { z } from "zod";
import { getImport, IMPORT_LIMITS, importUsers } from "../../domain/identity/imports/importUsers.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentImport, resultsCsv } from "./presenter.ts";
import { CreatedUserImport, CreateUserImportBody, UserImport, UserImportParams } from "./schemas.ts";

export const createUserImportRoute = defineRoute({
  method: "post",
  path: "/api/v1/users/imports",
  operationId: "createUserImport",
  tags: ["users"],
  summary: "Import users from a CSV (dry run by default)",
  description:
    "super_admins import into any organization; organization admins into theirs (a row naming another is an error of that row). " +
    "Each row is applied on its own, all or nothing; running the same file again changes nothing. " +
    "Accounts created get a temporary password, answered once in temporary_passwords. " +
    "Whole-file refusals: 400 import_csv_malformed, 400 import_too_many_rows, 413 import_file_too_large.",
  auth: "user",
  body: CreateUserImportBody,
  // JSON-escaped text of the largest file, with room for the envelope.
  bodyLimitBytes: IMPORT_LIMITS.maxBytes * 2 + 64 * 1024,
  audit: "user.import",
  errors: ["forbidden", "import_csv_malformed", "import_too_many_rows", "import_file_too_large"],
  responses: { 201: CreatedUserImport },
  handler: async ({ deps, principal, body, requestId, audit }) => {
    const { record, passwords } = await importUsers(deps, principal, {
      csv: body.csv,
      dryRun: body.dry_run,
      requestId,
    });
    audit.target("user_import", record.id);
    audit.detail("dry_run", record.dry_run);
    audit.detail("counts", record.counts);
    for (const o of record.organization_ids) audit.organization(o);
    return { status: 201, body: { ...presentImport(record), temporary_passwords: passwords } };
  },
});

export const getUserImportRoute = defineRoute({
  method: "get",
  path: "/api/v1/users/imports/:importId",
  operationId: "getUserImport",
  tags: ["users"],
  summary: "An import's rows and outcomes (no passwords)",
  description: "Seen by whoever ran it and by super_admins; anyone else gets 404.",
  auth: "user",
  params: UserImportParams,
  responses: { 200: UserImport },
  handler: async ({ deps, principal, params }) => {
    const r = await getImport(deps, principal, params.importId);
    return { status: 200, body: presentImport(r) };
  },
});

export const userImportResultsRoute = defineRoute({
  method: "get",
  path: "/api/v1/users/imports/:importId/results.csv",
  operationId: "getUserImportResults",
  tags: ["users"],
  summary: "An import's results as CSV (RFC 4180)",
  description:
    "One row per row of the file with its outcome, code and message. Cells a spreadsheet would take for a formula (starting with = + - @, tab or CR) carry a leading apostrophe.",
  auth: "user",
  params: UserImportParams,
  produces: { "text/csv": z.string().meta({ description: "A header row, then one row per row of the file." }) },
  responses: { 200: z.string().meta({ description: "text/csv" }) },
  handler: async ({ deps, principal, params }) => {
    const r = await getImport(deps, principal, params.importId);
    return { kind: "csv", filename: `user-import-${r.id}.csv`, headerPresent: true, body: resultsCsv(r) };
  },
});

export const routes: RouteDef[] = [createUserImportRoute, getUserImportRoute, userImportResultsRoute];
