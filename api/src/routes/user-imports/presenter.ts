import { csvLine } from "../../domain/identity/imports/csv.ts";
import type { RowResult } from "../../domain/identity/imports/importUsers.ts";
import { type ImportView, PASSWORD_RETENTION_MS } from "../../domain/identity/imports/results.ts";
import type { UserImport } from "./schemas.ts";

const iso = (d: Date | null) => (d === null ? null : new Date(d).toISOString());

export function presentImport(v: ImportView): UserImport {
  const { job } = v;
  const url = `/api/v1/users/imports/${job.id}`;
  return {
    id: job.id,
    dry_run: job.dry_run,
    state: job.state,
    created_at: new Date(job.created_at).toISOString(),
    started_at: iso(job.started_at),
    finished_at: iso(job.finished_at),
    rows_total: job.rows_total,
    rows_done: v.rowsDone,
    counts: v.counts,
    failure: job.failure,
    rows: v.results ?? [],
    results_url: `${url}/results.csv`,
    temporary_passwords: {
      state: job.passwords,
      count: job.dry_run ? 0 : v.counts.create,
      expires_at:
        job.passwords === "held" && job.finished_at
          ? new Date(new Date(job.finished_at).getTime() + PASSWORD_RETENTION_MS).toISOString()
          : null,
      url: `${url}/temporary-passwords`,
    },
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
export function resultsCsv(results: RowResult[]): string {
  let out = csvLine([...RESULT_COLUMNS]);
  for (const x of results)
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
