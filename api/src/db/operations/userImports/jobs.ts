// The bulk import's jobs and their rows (migration 20261129150000_user_import_jobs).
import type { Knex } from "knex";

export type JobState = "queued" | "running" | "succeeded" | "failed";
export type PasswordsState = "none" | "held" | "fetched" | "expired";

export interface ImportJobRow {
  id: string;
  actor_id: string;
  organization_ids: string[];
  dry_run: boolean;
  state: JobState;
  csv: string | null;
  rows_total: number;
  counts: Record<string, number>;
  request_id: string | null;
  claimed_by: string | null;
  claimed_until: Date | null;
  attempts: number;
  failure: { code: string; message: string } | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  passwords: PasswordsState;
  passwords_ended_at: Date | null;
}

export async function insertImportJob(
  db: Knex,
  job: Pick<ImportJobRow, "id" | "actor_id" | "organization_ids" | "dry_run" | "csv" | "rows_total" | "request_id"> & {
    created_at: Date;
  },
): Promise<void> {
  await db("user_imports").insert({ ...job, state: "queued", counts: JSON.stringify({}) });
}

const WITHOUT_FILE = [
  "id",
  "actor_id",
  "organization_ids",
  "dry_run",
  "state",
  "rows_total",
  "counts",
  "request_id",
  "claimed_by",
  "claimed_until",
  "attempts",
  "failure",
  "created_at",
  "started_at",
  "finished_at",
  "passwords",
  "passwords_ended_at",
] as const;

/** A job without its file (`csv` null): polled every second by clients, it need not send up to 4 MiB each time. */
export async function findImportJob(db: Knex, id: string): Promise<ImportJobRow | undefined> {
  const row = await db("user_imports").where({ id }).first(WITHOUT_FILE);
  return row ? ({ ...row, csv: null } as ImportJobRow) : undefined;
}

/**
 * Takes up to `n` jobs nobody holds (queued, or running under a claim that ran out: a crashed or stopped
 * worker) for `worker` until `until`, oldest first. SKIP LOCKED: replicas never take the same one.
 */
export async function claimImportJobs(
  db: Knex,
  worker: string,
  now: Date,
  until: Date,
  n: number,
): Promise<ImportJobRow[]> {
  if (n <= 0) return [];
  const { rows } = (await db.raw(
    `UPDATE user_imports SET claimed_by = ?, claimed_until = ?, attempts = attempts + 1, state = 'running',
            started_at = coalesce(started_at, ?)
       WHERE id IN (
         SELECT id FROM user_imports
          WHERE state IN ('queued', 'running') AND (claimed_until IS NULL OR claimed_until < ?)
          ORDER BY created_at FOR UPDATE SKIP LOCKED LIMIT ?)
     RETURNING *`,
    [worker, until, now, now, n],
  )) as { rows: ImportJobRow[] };
  return rows;
}

/** Extends the claim; false when another worker holds the job now (this one must stop). */
export async function renewImportClaim(db: Knex, id: string, worker: string, until: Date): Promise<boolean> {
  const n = await db("user_imports")
    .where({ id, claimed_by: worker, state: "running" })
    .update({ claimed_until: until });
  return n === 1;
}

/** Lets go of a claim at once (after an unexpected failure), so the next pass takes the job again. */
export async function releaseImportClaim(db: Knex, id: string, worker: string, at: Date): Promise<void> {
  await db("user_imports").where({ id, claimed_by: worker, state: "running" }).update({ claimed_until: at });
}

/** Ends a job this worker holds: its counts, state and failure; the file is dropped (it is no longer needed). */
export async function finishImportJob(
  db: Knex,
  id: string,
  worker: string | null,
  end: {
    state: "succeeded" | "failed";
    counts: Record<string, number>;
    failure: { code: string; message: string } | null;
    at: Date;
  },
): Promise<boolean> {
  const held = await db("user_import_rows").where({ import_id: id }).whereNotNull("sealed_password").first("idx");
  const n = await db("user_imports")
    .where({ id })
    .modify((q) => (worker === null ? q : q.where({ claimed_by: worker })))
    .whereIn("state", ["queued", "running"])
    .update({
      state: end.state,
      counts: JSON.stringify(end.counts),
      failure: end.failure === null ? null : JSON.stringify(end.failure),
      finished_at: end.at,
      csv: null,
      claimed_by: null,
      claimed_until: null,
      passwords: held ? "held" : "none",
    });
  return n === 1;
}

export interface ImportRowRecord {
  idx: number;
  outcome: string;
  result: unknown;
  sealed_password?: string | null;
}

export async function insertImportRows(db: Knex, importId: string, rows: ImportRowRecord[]): Promise<void> {
  if (rows.length === 0) return;
  await db("user_import_rows").insert(
    rows.map((r) => ({
      import_id: importId,
      idx: r.idx,
      outcome: r.outcome,
      result: JSON.stringify(r.result),
      sealed_password: r.sealed_password ?? null,
    })),
  );
}

/** Which rows of the file have a record (a resumed job skips them). */
export async function doneRowIndexes(db: Knex, importId: string): Promise<Set<number>> {
  return new Set((await db("user_import_rows").where({ import_id: importId }).pluck("idx")) as number[]);
}

export async function deleteImportRows(db: Knex, importId: string): Promise<void> {
  await db("user_import_rows").where({ import_id: importId }).del();
}

/** Rows done so far by outcome (a running job's progress). */
export async function countImportRows(db: Knex, importId: string): Promise<Record<string, number>> {
  const rows = (await db("user_import_rows")
    .where({ import_id: importId })
    .groupBy("outcome")
    .select("outcome")
    .count({ n: "*" })) as { outcome: string; n: string | number }[];
  return Object.fromEntries(rows.map((r) => [r.outcome, Number(r.n)]));
}

export async function importRowResults(db: Knex, importId: string): Promise<unknown[]> {
  return (await db("user_import_rows").where({ import_id: importId }).orderBy("idx").pluck("result")) as unknown[];
}

/**
 * The job's sealed passwords, taken once: the job moves from `held` to `fetched` and the sealed values are
 * erased in the same transaction. Undefined when they are not held (fetched, expired, or never any): the row
 * lock makes a second, concurrent fetch wait and then find them gone.
 */
export async function takeSealedPasswords(
  db: Knex,
  importId: string,
  at: Date,
): Promise<{ idx: number; result: unknown; sealed_password: string }[] | undefined> {
  return db.transaction(async (tx) => {
    const n = await tx("user_imports")
      .where({ id: importId, passwords: "held" })
      .update({ passwords: "fetched", passwords_ended_at: at });
    if (n !== 1) return undefined;
    const { rows } = (await tx.raw(
      `UPDATE user_import_rows r SET sealed_password = NULL
         FROM (SELECT idx, sealed_password FROM user_import_rows
                WHERE import_id = ? AND sealed_password IS NOT NULL FOR UPDATE) old
        WHERE r.import_id = ? AND r.idx = old.idx
        RETURNING r.idx, r.result, old.sealed_password`,
      [importId, importId],
    )) as { rows: { idx: number; result: unknown; sealed_password: string }[] };
    return rows.sort((a, b) => a.idx - b.idx);
  });
}

/** Erases the sealed passwords of jobs that ended before `before` and were never fetched; how many jobs. */
export async function expireSealedPasswords(db: Knex, before: Date, at: Date, batch: number): Promise<number> {
  return db.transaction(async (tx) => {
    const ids = (await tx("user_imports")
      .where({ passwords: "held" })
      .where("finished_at", "<", before)
      .orderBy("finished_at")
      .limit(batch)
      .forUpdate()
      .skipLocked()
      .pluck("id")) as string[];
    if (ids.length === 0) return 0;
    await tx("user_import_rows").whereIn("import_id", ids).whereNotNull("sealed_password").update({
      sealed_password: null,
    });
    await tx("user_imports").whereIn("id", ids).update({ passwords: "expired", passwords_ended_at: at });
    return ids.length;
  });
}
