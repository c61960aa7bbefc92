import { csvLine } from "../../domain/identity/imports/csv.ts";
import type { ImportRecord } from "../../domain/identity/imports/importUsers.ts";
import type { UserImport } from "./schemas.ts";

export function presentImport(r: ImportRecord): UserImport {
  return {
    id: r.id,
    dry_run: r.dry_run,
    created_at: new Date(r.created_at).toISOString(),
    counts: r.counts,
    rows: r.results,
    results_url: `/api/v1/users/imports/${r.id}/results.csv`,
  };
}

export const RESULT_COLUMNS = [
  "line",
  "email",
  "name",
  "organization",
  "project",
  "role",
  "initial_credits",
  "outcome",
  "code",
  "message",
  "user_id",
  "welcome_credit",
] as const;

/** Every row's result; cells echoing the file are neutralised for spreadsheets (csv.ts). */
export function resultsCsv(r: ImportRecord): string {
  let out = csvLine([...RESULT_COLUMNS]);
  for (const x of r.results)
    out += csvLine([
      x.line,
      x.email,
      x.name,
      x.organization,
      x.project,
      x.role,
      x.initial_credits,
      x.outcome,
      x.code,
      x.message,
      x.user_id,
      x.welcome_credit,
    ]);
  return out;
}
