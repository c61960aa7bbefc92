import { z } from "zod";
import { IMPORT_LIMITS } from "../../domain/identity/imports/importUsers.ts";
import { IMPORT_COLUMNS } from "../../domain/identity/imports/rows.ts";
import { Id } from "../users/schemas.ts";

const Timestamp = z.string().meta({ description: "RFC 3339, UTC." });

export const CreateUserImportBody = z
  .object({
    // The bound is checked by the domain (413 import_file_too_large, with the bound in details), so the
    // schema does not refuse a long file first as a plain validation error.
    csv: z.string().meta({
      description: `The file's text: a header naming some of ${IMPORT_COLUMNS.join(", ")} (email required), then one row per person. At most ${IMPORT_LIMITS.maxRows} rows and ${IMPORT_LIMITS.maxBytes} bytes.`,
    }),
    dry_run: z.boolean().default(true).meta({
      description: "true (the default): report each row's outcome and write nothing. false: import.",
    }),
  })
  .meta({ id: "CreateUserImportRequest" });

export const ImportRowResult = z
  .object({
    line: z.int().meta({ description: "The file's line on which the row starts (1 is the header)." }),
    email: z.string(),
    name: z.string(),
    organization: z.string(),
    project: z.string(),
    role: z.string(),
    initial_credits: z.string().meta({ description: "As written in the file (credits, not minor units)." }),
    outcome: z.enum(["create", "update", "unchanged", "error"]),
    code: z.string().nullable().meta({
      description:
        "For errors: wrong_column_count, formula_injection, invalid_email, invalid_name, missing_organization, invalid_role, invalid_credits, duplicate_email, unknown_organization, unknown_project, forbidden, insufficient_credits, conflict.",
    }),
    message: z.string(),
    user_id: z.string().nullable(),
    organization_id: z.string().nullable(),
    project_id: z.string().nullable(),
    welcome_credit: z.enum(["given", "unpaid"]).nullable().meta({
      description: "unpaid: the person joined, but the organization's wallet could not pay the welcome credit.",
    }),
  })
  .meta({ id: "UserImportRow" });

export const UserImport = z
  .object({
    id: z.string().meta({ example: "imp_3k9v0c2m5q8x1w7z4r6t" }),
    dry_run: z.boolean(),
    state: z.enum(["queued", "running", "succeeded", "failed"]).meta({
      description:
        "queued: accepted, waiting for the worker; running; succeeded: every row has its outcome (errors included); failed: stopped before the end (failure says why), every row done is recorded and counted.",
    }),
    created_at: Timestamp,
    started_at: Timestamp.nullable(),
    finished_at: Timestamp.nullable(),
    rows_total: z.int().meta({ description: "Rows in the file." }),
    rows_done: z.int().meta({ description: "Rows with an outcome so far." }),
    counts: z.object({ create: z.int(), update: z.int(), unchanged: z.int(), error: z.int() }),
    failure: z.object({ code: z.string(), message: z.string() }).nullable().meta({
      description: "Why a failed import stopped (forbidden: its administrator lost the right; import_interrupted).",
    }),
    rows: z.array(ImportRowResult).meta({ description: "Every row's result once the import has ended; empty before." }),
    results_url: z.string().meta({ description: "Every row's result as CSV, once the import has ended." }),
    temporary_passwords: z
      .object({
        state: z.enum(["none", "held", "fetched", "expired"]).meta({
          description:
            "none: no account was made (or a dry run); held: sealed, waiting for the administrator who started the import to fetch them once; fetched or expired: erased.",
        }),
        count: z.int(),
        expires_at: Timestamp.nullable().meta({ description: "When held passwords are erased unfetched." }),
        url: z.string().meta({ description: "POST here to fetch them, once." }),
      })
      .meta({ id: "UserImportPasswords" }),
  })
  .meta({ id: "UserImport" });
export type UserImport = z.infer<typeof UserImport>;

export const UserImportTemporaryPasswords = z
  .object({
    temporary_passwords: z.array(z.object({ email: z.string(), user_id: z.string(), password: z.string() })).meta({
      description:
        "The temporary password of each account the import made, given this once and erased. Hand each to its person; the first sign-in asks for a new one.",
    }),
  })
  .meta({ id: "UserImportTemporaryPasswords" });

export const UserImportParams = z.object({ importId: Id });
