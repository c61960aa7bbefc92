// Bulk user import (docs/dev/identity.md, "Bulk import"), wired from its parts:
//   - rows.ts, csv.ts: the file as values (pure): the header, each row's own checks, formula injection;
//   - known.ts: what is read up front (the organizations and projects named, the people's accounts,
//     memberships and ledger keys);
//   - rowRules.ts: what a row means and does (applyRow on a RowWorld) and its outcome;
//   - stagedWorld.ts: the rows played in memory, each kept only if not refused, gathering their writes;
//   - dbWorld.ts: the real run's back end, a chunk of rows read, played and written in one transaction;
//   - dryWorld.ts: the dry run's back end, the rows played on what was read up front, only records written;
//   - results.ts: the job's progress, results and temporary passwords.
// A file is taken at once (acceptImport: the whole-file checks) and its rows are run by the worker as a
// job (runImport, worker/userImports.ts), in chunks, extending the job's claim before each.
// - Idempotent per email: a row whose account, memberships and initial credits are already as it says
//   is `unchanged`; initial credits are paid once per person and organization (ledger key
//   `import:initial:<organization>:<user>`), the welcome credit once ever (credits/welcome.ts).
// - New accounts get a generated temporary password (must change it at first sign-in, as accounts made
//   by an administrator do), kept sealed in the row's record until the importer fetches them once
//   (results.ts takeTemporaryPasswords) or the retention erases them; the person's bell gets a welcome
//   notification.
import {
  countImportRows,
  deleteImportRows,
  doneRowIndexes,
  findImportJob,
  type ImportJobRow,
  insertImportJob,
} from "../../../db/operations/userImports/jobs.ts";
import type { Deps } from "../../../deps.ts";
import { DomainError, Forbidden } from "../../../errors.ts";
import { newId } from "../ids.ts";
import { loadPrincipal } from "../loadPrincipal.ts";
import type { Principal } from "../principal.ts";
import { scopeOf } from "../scope.ts";
import { parseCsv } from "./csv.ts";
import { DbWorld, type ImportRunDeps } from "./dbWorld.ts";
import { DryWorld } from "./dryWorld.ts";
import { resolveNames } from "./known.ts";
import { passwordAad } from "./results.ts";
import { fileOrganizations, type ImportRun, type Outcome, RowRefused, target } from "./rowRules.ts";
import { type CheckedRow, checkRows } from "./rows.ts";

export type { Outcome, RowResult } from "./rowRules.ts";

/** Bounds of one file: 10,000 rows is the target; 4 MiB holds them with long names. */
export const IMPORT_LIMITS = { maxBytes: 4 * 1024 * 1024, maxRows: 10_000 } as const;

/**
 * Rows between two extensions of the job's claim; in the real run, rows per transaction: larger chunks
 * hold the organizations' wallet locks longer, stopping their billing meanwhile.
 */
const CHUNK = 50;

export function checkImportFile(csv: string): CheckedRow[] {
  const bytes = Buffer.byteLength(csv, "utf8");
  if (bytes > IMPORT_LIMITS.maxBytes)
    throw new DomainError(
      "import_file_too_large",
      `the file is ${bytes} bytes; the bound is ${IMPORT_LIMITS.maxBytes}`,
      {
        limit_bytes: IMPORT_LIMITS.maxBytes,
        bytes,
      },
    );
  const records = parseCsv(csv);
  if (records.length - 1 > IMPORT_LIMITS.maxRows)
    throw new DomainError(
      "import_too_many_rows",
      `the file has ${records.length - 1} rows; the bound is ${IMPORT_LIMITS.maxRows}`,
      { limit_rows: IMPORT_LIMITS.maxRows, rows: records.length - 1 },
    );
  return checkRows(records);
}

/**
 * Takes a file: the checks that refuse it whole (size, rows, CSV syntax) and who may import answer at
 * once; the rows are the job's (runImport, in the worker). The file is kept with the job until it ends.
 */
export async function acceptImport(
  deps: Pick<Deps, "db" | "clock">,
  principal: Principal,
  input: { csv: string; dryRun: boolean; requestId: string },
): Promise<ImportJobRow> {
  const s = scopeOf(principal);
  if (!s.all && s.adminOrganizations.size === 0)
    throw new Forbidden("only super_admins and organization admins import users");
  const checked = checkImportFile(input.csv);
  const { orgs } = await resolveNames(deps.db, checked);
  const organizationIds = new Set<string>();
  for (const c of checked) {
    if (!c.ok) continue;
    try {
      const org = target(s, c.row, orgs);
      if (org) organizationIds.add(org.id);
    } catch (err) {
      if (!(err instanceof RowRefused)) throw err;
    }
  }
  const job = {
    id: `imp_${newId("usr").slice(4)}`,
    actor_id: principal.userId,
    organization_ids: [...organizationIds],
    dry_run: input.dryRun,
    csv: input.csv,
    rows_total: checked.length,
    request_id: input.requestId,
    created_at: deps.clock.now(),
  };
  await insertImportJob(deps.db, job);
  return (await findImportJob(deps.db, job.id)) as ImportJobRow;
}

/** The worker's hooks into a job it runs (worker/userImports.ts). */
export interface JobHooks {
  /** Seals a temporary password for the row's record (secretBox.ts, bound to the import and the account). */
  seal(password: string, aad: string): string;
  /** Extends the job's claim before each chunk; false: another worker holds it now, stop. */
  keepClaim(): Promise<boolean>;
}

/** The job's claim went to another worker: this one stops where it is (every row done is recorded). */
export class ClaimLost extends Error {
  override name = "ClaimLost";
}

/**
 * Runs a job's rows from where it stands: a real run skips the rows already recorded (each row's record
 * commits with what the row did), a dry run (which wrote nothing) starts again. Answers the counts.
 */
export async function runImport(
  deps: ImportRunDeps,
  job: ImportJobRow,
  hooks: JobHooks,
): Promise<Record<Outcome, number>> {
  const loaded = await loadPrincipal(deps.db, job.actor_id);
  if (!loaded || loaded.disabled) throw new Forbidden("the account that started the import is gone or disabled");
  const principal = loaded.principal;
  const scope = scopeOf(principal);
  if (!scope.all && scope.adminOrganizations.size === 0)
    throw new Forbidden("the account that started the import is no longer an administrator");
  if (job.csv === null) throw new Error(`import ${job.id} has no file`);
  const checked = checkImportFile(job.csv);
  if (job.dry_run) await deleteImportRows(deps.db, job.id);
  const done = job.dry_run ? new Set<number>() : await doneRowIndexes(deps.db, job.id);
  const todo = checked.map((c, idx) => ({ c, idx })).filter((x) => !done.has(x.idx));
  const { orgs, projects } = await resolveNames(deps.db, checked);
  const run: ImportRun = {
    principal,
    scope,
    orgs,
    projects,
    perOrg: new Map(),
    at: deps.clock.now(),
    input: { dryRun: job.dry_run, requestId: job.request_id ?? job.id },
  };
  const organizations = fileOrganizations(run, checked);
  const world = job.dry_run
    ? await DryWorld.open(deps.db, job.id, run, organizations, todo)
    : await DbWorld.open(deps, job.id, run, organizations, todo, (a) =>
        a.password !== undefined && a.result.user_id !== null
          ? hooks.seal(a.password, passwordAad(job.id, a.result.user_id))
          : null,
      );
  for (let i = 0; i < todo.length; i += CHUNK) {
    if (!(await hooks.keepClaim())) throw new ClaimLost(`import ${job.id} is held by another worker now`);
    await world.chunk(todo.slice(i, i + CHUNK));
  }

  const counts: Record<Outcome, number> = { create: 0, update: 0, unchanged: 0, error: 0 };
  for (const [k, n] of Object.entries(await countImportRows(deps.db, job.id))) counts[k as Outcome] = n;
  return counts;
}
