// What an import shows once accepted: its progress, its rows' results once it has ended, and the temporary
// passwords of the accounts it made, given once to the administrator who started it.
import type { Knex } from "knex";
import {
  countImportRows,
  findImportJob,
  type ImportJobRow,
  importRowResults,
  takeSealedPasswords,
} from "../../../db/operations/userImports/jobs.ts";
import type { Deps } from "../../../deps.ts";
import { DomainError, Forbidden, NotFound } from "../../../errors.ts";
import type { Principal } from "../principal.ts";
import { scopeOf } from "../scope.ts";
import type { Outcome, RowResult } from "./rowRules.ts";

/**
 * How long an ended import holds its sealed temporary passwords for the importer to fetch; then the worker
 * erases them (worker/userImports.ts). A day: time to come back to a long import, not a store of secrets.
 */
export const PASSWORD_RETENTION_MS = 24 * 3_600_000;

/** What a temporary password is bound to when sealed: a sealed value copied elsewhere does not open. */
export const passwordAad = (importId: string, userId: string) => `user_import:${importId}:${userId}`;

/** An import with its progress; its rows once it has ended. */
export interface ImportView {
  job: ImportJobRow;
  counts: Record<Outcome, number>;
  rowsDone: number;
  results: RowResult[] | undefined;
}

const ended = (job: ImportJobRow) => job.state === "succeeded" || job.state === "failed";

/** An import, seen by whoever ran it and by super_admins; 404 for anyone else (existence not revealed). */
async function visibleJob(db: Knex, principal: Principal, id: string): Promise<ImportJobRow> {
  const job = await findImportJob(db, id);
  if (!job || (!principal.isSuperAdmin && job.actor_id !== principal.userId)) throw new NotFound("user_import", id);
  return job;
}

export async function getImport(deps: Pick<Deps, "db">, principal: Principal, id: string): Promise<ImportView> {
  const job = await visibleJob(deps.db, principal, id);
  const counts: Record<Outcome, number> = { create: 0, update: 0, unchanged: 0, error: 0 };
  const live = ended(job) ? job.counts : await countImportRows(deps.db, id);
  for (const [k, n] of Object.entries(live)) counts[k as Outcome] = n;
  const rowsDone = counts.create + counts.update + counts.unchanged + counts.error;
  const results = ended(job) ? ((await importRowResults(deps.db, id)) as RowResult[]) : undefined;
  return { job, counts, rowsDone, results };
}

/** The rows' results, once the import has ended (409 import_not_finished before). */
export async function getImportResults(
  deps: Pick<Deps, "db">,
  principal: Principal,
  id: string,
): Promise<{ job: ImportJobRow; results: RowResult[] }> {
  const job = await visibleJob(deps.db, principal, id);
  if (!ended(job)) throw notFinished(job);
  return { job, results: (await importRowResults(deps.db, id)) as RowResult[] };
}

const notFinished = (job: ImportJobRow) =>
  new DomainError("import_not_finished", `the import is ${job.state}; ask again when it has ended`, {
    state: job.state,
  });

/**
 * The temporary passwords of the accounts an import made, given once to the administrator who started it
 * (still an administrator: a super_admin, or an admin of an organization the import went into) and erased
 * in the same transaction. Anyone else who may see the import gets 403; a second fetch, or one after the
 * retention, 410 import_passwords_gone. An import that made no account (a dry run) has none: an empty list.
 */
export async function takeTemporaryPasswords(
  deps: Pick<Deps, "db" | "clock">,
  principal: Principal,
  id: string,
  open: (sealed: string, aad: string) => string,
): Promise<{ email: string; user_id: string; password: string }[]> {
  const job = await visibleJob(deps.db, principal, id);
  const refuse = () => new Forbidden("only the administrator who started the import may fetch its temporary passwords");
  if (job.actor_id !== principal.userId) throw refuse();
  if (!ended(job)) throw notFinished(job);
  if (job.passwords === "none") return [];
  // Still an administrator where the import made accounts: a demoted admin no longer hands out access.
  const s = scopeOf(principal);
  if (!s.all && !job.organization_ids.some((o) => s.adminOrganizations.has(o))) throw refuse();
  const taken = await takeSealedPasswords(deps.db, id, deps.clock.now());
  if (!taken) {
    const now = (await findImportJob(deps.db, id)) ?? job;
    throw new DomainError(
      "import_passwords_gone",
      now.passwords === "expired"
        ? "the temporary passwords were erased by the retention before they were fetched; reset those accounts' passwords"
        : "the temporary passwords were fetched already and erased; reset those accounts' passwords",
      {
        reason: now.passwords === "expired" ? "expired" : "fetched",
        ...(now.passwords_ended_at ? { at: new Date(now.passwords_ended_at).toISOString() } : {}),
      },
    );
  }
  return taken.map((t) => {
    const r = t.result as RowResult;
    const userId = r.user_id as string;
    return { email: r.email, user_id: userId, password: open(t.sealed_password, passwordAad(id, userId)) };
  });
}
