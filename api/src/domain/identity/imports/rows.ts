// An import's rows as values: the header decides the columns, each row is checked on its own (pure, no
// database). A row that fails here is reported with a stable code and never touches the database;
// resolving names (organization, project) and permissions happens in importUsers.ts.
import { z } from "zod";
import { MINOR_UNITS_PER_CREDIT } from "../../credits/money.ts";
import { normalizeEmail } from "../email.ts";
import { type CsvRecord, FORMULA_START, malformed } from "./csv.ts";

export const IMPORT_COLUMNS = ["email", "name", "organization", "project", "role", "initial_credits"] as const;
export type ImportColumn = (typeof IMPORT_COLUMNS)[number];
export const IMPORT_ROLES = ["member", "org_admin", "project_admin"] as const;
export type ImportRole = (typeof IMPORT_ROLES)[number];

/** A row's own problems; importUsers.ts adds unknown_organization, unknown_project, forbidden, insufficient_credits. */
export type RowErrorCode =
  | "wrong_column_count"
  | "formula_injection"
  | "invalid_email"
  | "invalid_name"
  | "missing_organization"
  | "invalid_role"
  | "invalid_credits"
  | "duplicate_email";

export interface ImportRow {
  line: number;
  email: string;
  name: string | null;
  organization: string | null;
  project: string | null;
  role: ImportRole;
  /** Minor units; 0 when the cell is empty. */
  initialCredits: bigint;
}

export type CheckedRow =
  | { line: number; ok: true; row: ImportRow; raw: Record<ImportColumn, string> }
  | { line: number; ok: false; code: RowErrorCode; message: string; raw: Record<ImportColumn, string> };

const Email = z.email().max(320);
/** Whole credits with up to six decimals ("10", "2.5"): what a person types in a spreadsheet. */
const CREDITS = /^(0|[1-9][0-9]{0,11})(\.[0-9]{1,6})?$/;

function header(record: CsvRecord): ImportColumn[] {
  const seen = new Set<string>();
  return record.cells.map((c, i) => {
    const name = c
      .trim()
      .toLowerCase()
      .replace(/[\s-]+/g, "_");
    if (!(IMPORT_COLUMNS as readonly string[]).includes(name))
      throw malformed("unknown_column", `column ${i + 1} "${c}" is not one of ${IMPORT_COLUMNS.join(", ")}`, {
        line: 1,
        column: c,
        columns: IMPORT_COLUMNS,
      });
    if (seen.has(name))
      throw malformed("duplicate_column", `column "${name}" appears twice`, { line: 1, column: name });
    seen.add(name);
    return name as ImportColumn;
  });
}

export function creditsToUnits(s: string): bigint | undefined {
  if (!CREDITS.test(s)) return undefined;
  const [whole = "0", frac = ""] = s.split(".");
  return BigInt(whole) * MINOR_UNITS_PER_CREDIT + BigInt(frac.padEnd(6, "0"));
}

/** The header and each row checked; duplicates of an email in one file are all refused (none is chosen). */
export function checkRows(records: CsvRecord[]): CheckedRow[] {
  const [head, ...body] = records;
  if (!head) throw malformed("empty", "the file is empty: a header row and at least one row are needed");
  const columns = header(head);
  if (!columns.includes("email"))
    throw malformed("missing_column", "the header has no email column", { line: 1, column: "email" });
  if (body.length === 0) throw malformed("no_rows", "the file has a header but no rows", { line: 1 });
  const checked = body.map((r) => checkRow(r, columns));
  const count = new Map<string, number>();
  for (const c of checked) if (c.ok) count.set(c.row.email, (count.get(c.row.email) ?? 0) + 1);
  return checked.map((c) =>
    c.ok && (count.get(c.row.email) ?? 0) > 1
      ? {
          line: c.line,
          ok: false,
          code: "duplicate_email",
          message: `${c.row.email} appears on ${count.get(c.row.email)} rows of this file; keep one`,
          raw: c.raw,
        }
      : c,
  );
}

function checkRow(r: CsvRecord, columns: ImportColumn[]): CheckedRow {
  const raw = Object.fromEntries(IMPORT_COLUMNS.map((c) => [c, ""])) as Record<ImportColumn, string>;
  columns.forEach((c, i) => {
    raw[c] = r.cells[i] ?? "";
  });
  const fail = (code: RowErrorCode, message: string): CheckedRow => ({ line: r.line, ok: false, code, message, raw });
  if (r.cells.length !== columns.length)
    return fail("wrong_column_count", `the row has ${r.cells.length} fields; the header has ${columns.length}`);
  // A cell a spreadsheet would run as a formula is refused, not silently changed: the person who wrote
  // it decides what it should be. (The results file shows it neutralised; csv.ts.)
  for (const c of columns) {
    if (FORMULA_START.test(raw[c]))
      return fail("formula_injection", `${c} starts with a formula character (= + - @, tab or CR); remove it`);
  }
  const email = raw.email.trim();
  if (!Email.safeParse(email).success) return fail("invalid_email", `"${email}" is not an email address`);
  const name = raw.name.trim();
  if (name.length > 128) return fail("invalid_name", "name is longer than 128 characters");
  const organization = raw.organization.trim();
  const project = raw.project.trim();
  if (project !== "" && organization === "")
    return fail("missing_organization", "a project is named without its organization");
  const roleText = raw.role.trim().toLowerCase() || "member";
  if (!(IMPORT_ROLES as readonly string[]).includes(roleText))
    return fail("invalid_role", `role "${raw.role}" is not one of ${IMPORT_ROLES.join(", ")}`);
  const role = roleText as ImportRole;
  if (role === "project_admin" && project === "") return fail("invalid_role", "project_admin needs a project");
  if (role === "org_admin" && project !== "")
    return fail("invalid_role", "org_admin is a role in the organization: leave project empty");
  if (role !== "member" && organization === "") return fail("missing_organization", `${role} needs an organization`);
  const creditsText = raw.initial_credits.trim();
  const initialCredits = creditsText === "" ? 0n : creditsToUnits(creditsText);
  if (initialCredits === undefined)
    return fail("invalid_credits", `initial_credits "${creditsText}" is not a number of credits (e.g. 10 or 2.5)`);
  if (initialCredits > 0n && organization === "")
    return fail("missing_organization", "initial credits come from an organization's wallet: name it");
  return {
    line: r.line,
    ok: true,
    raw,
    row: {
      line: r.line,
      email: normalizeEmail(email),
      name: name === "" ? null : name,
      organization: organization === "" ? null : organization,
      project: project === "" ? null : project,
      role,
      initialCredits,
    },
  };
}
