// Bulk user import as a background job: the file is accepted at once (202, whole-file checks), the worker
// runs its rows; the importer polls the job, downloads every row's result when it has ended and fetches the
// temporary passwords once. docs/dev/identity.md, "Bulk import".
import { z } from "zod";
import { acceptImport, IMPORT_LIMITS } from "../../domain/identity/imports/importUsers.ts";
import { getImport, getImportResults, takeTemporaryPasswords } from "../../domain/identity/imports/results.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentImport, resultsCsv } from "./presenter.ts";
import { CreateUserImportBody, UserImport, UserImportParams, UserImportTemporaryPasswords } from "./schemas.ts";

export const createUserImportRoute = defineRoute({
  method: "post",
  path: "/api/v1/users/imports",
  operationId: "createUserImport",
  tags: ["users"],
  summary: "Start an import of users from a CSV (dry run by default)",
  description:
    "The file is checked whole and accepted as a job (202, Location: the job); the worker runs its rows. " +
    "super_admins import into any organization; organization admins into theirs (a row naming another is an error of that row). " +
    "Each row is applied on its own, all or nothing; running the same file again changes nothing. " +
    "Accounts created get a temporary password, fetched once from the job's temporary_passwords.url when it has ended. " +
    "Whole-file refusals: 400 import_csv_malformed, 400 import_too_many_rows, 413 import_file_too_large.",
  auth: "user",
  body: CreateUserImportBody,
  // JSON-escaped text of the largest file, with room for the envelope.
  bodyLimitBytes: IMPORT_LIMITS.maxBytes * 2 + 64 * 1024,
  audit: "user.import",
  auditBody: (b) => ({ dry_run: b.dry_run, csv: `${b.csv.length} characters, not kept` }),
  errors: ["forbidden", "import_csv_malformed", "import_too_many_rows", "import_file_too_large"],
  responses: { 202: UserImport },
  handler: async ({ deps, principal, body, requestId, audit }) => {
    const job = await acceptImport(deps, principal, { csv: body.csv, dryRun: body.dry_run, requestId });
    audit.target("user_import", job.id);
    audit.detail("dry_run", job.dry_run);
    audit.detail("rows", job.rows_total);
    for (const o of job.organization_ids) audit.organization(o);
    const view = { job, counts: { create: 0, update: 0, unchanged: 0, error: 0 }, rowsDone: 0, results: undefined };
    return { status: 202, body: presentImport(view), headers: { Location: `/api/v1/users/imports/${job.id}` } };
  },
});

export const getUserImportRoute = defineRoute({
  method: "get",
  path: "/api/v1/users/imports/:importId",
  operationId: "getUserImport",
  tags: ["users"],
  summary: "An import's state, progress and (once ended) rows; never passwords",
  description: "Seen by whoever ran it and by super_admins; anyone else gets 404.",
  auth: "user",
  params: UserImportParams,
  responses: { 200: UserImport },
  handler: async ({ deps, principal, params }) => {
    return { status: 200, body: presentImport(await getImport(deps, principal, params.importId)) };
  },
});

export const userImportResultsRoute = defineRoute({
  method: "get",
  path: "/api/v1/users/imports/:importId/results.csv",
  operationId: "getUserImportResults",
  tags: ["users"],
  summary: "An import's results as CSV (RFC 4180), once it has ended",
  description:
    "One row per row of the file with its outcome, code and message; 409 import_not_finished before the import has ended. Cells a spreadsheet would take for a formula (starting with = + - @, tab or CR) carry a leading apostrophe.",
  auth: "user",
  params: UserImportParams,
  errors: ["import_not_finished"],
  produces: { "text/csv": z.string().meta({ description: "A header row, then one row per row of the file." }) },
  responses: { 200: z.string().meta({ description: "text/csv" }) },
  handler: async ({ deps, principal, params }) => {
    const r = await getImportResults(deps, principal, params.importId);
    return { kind: "csv", filename: `user-import-${r.job.id}.csv`, headerPresent: true, body: resultsCsv(r.results) };
  },
});

export const takeUserImportPasswordsRoute = defineRoute({
  method: "post",
  path: "/api/v1/users/imports/:importId/temporary-passwords",
  operationId: "takeUserImportPasswords",
  tags: ["users"],
  summary: "Fetch an ended import's temporary passwords, once",
  description:
    "Only the administrator who started the import (still an administrator of an organization it went into, or a super_admin). " +
    "They are erased as they are answered: a second fetch is 410 import_passwords_gone (details.reason fetched), as is one after the retention (expired). " +
    "409 import_not_finished while the import runs; an import that made no account answers an empty list. Not replayable: it takes no Idempotency-Key.",
  auth: "user",
  params: UserImportParams,
  audit: "user.import.passwords_fetched",
  errors: ["forbidden", "import_not_finished", "import_passwords_gone"],
  responses: { 200: UserImportTemporaryPasswords },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("user_import", params.importId);
    const box = deps.webhooks.secrets;
    const passwords = await takeTemporaryPasswords(deps, principal, params.importId, (sealed, aad) =>
      box.open(sealed, aad),
    );
    audit.detail("passwords", passwords.length);
    return { status: 200, body: { temporary_passwords: passwords } };
  },
});

export const routes: RouteDef[] = [
  createUserImportRoute,
  getUserImportRoute,
  userImportResultsRoute,
  takeUserImportPasswordsRoute,
];
