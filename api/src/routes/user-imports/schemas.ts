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
    created_at: Timestamp,
    counts: z.object({ create: z.int(), update: z.int(), unchanged: z.int(), error: z.int() }),
    rows: z.array(ImportRowResult),
    results_url: z.string().meta({ description: "Every row's result as CSV." }),
  })
  .meta({ id: "UserImport" });
export type UserImport = z.infer<typeof UserImport>;

export const CreatedUserImport = UserImport.extend({
  temporary_passwords: z.array(z.object({ email: z.string(), user_id: z.string(), password: z.string() })).meta({
    description:
      "Real runs: the temporary password of each account created, shown this once and stored nowhere in clear. Hand each to its person; the first sign-in asks for a new one.",
  }),
}).meta({ id: "CreatedUserImport" });

export const UserImportParams = z.object({ importId: Id });
