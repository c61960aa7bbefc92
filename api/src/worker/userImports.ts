// Bulk user imports, a leader-only loop of the worker (docs/dev/identity.md, "Bulk import"): claims jobs
// nobody holds (a crashed or stopped holder's claim runs out and another takes over), runs their rows
// (domain/identity/imports/importUsers.ts runImport) extending the claim before each chunk, and ends each
// job with its counts. A job that keeps stopping is ended `failed` with what was done (every row done has
// its record). The same pass erases the sealed temporary passwords of jobs that ended over a day ago and
// were never fetched.
import { hostname } from "node:os";
import { PeriodicPass } from "@berth/controllers/kube";
import type { Knex } from "knex";
import type { Logger } from "pino";
import type { Clock } from "../clock.ts";
import {
  claimImportJobs,
  countImportRows,
  expireSealedPasswords,
  finishImportJob,
  type ImportJobRow,
  releaseImportClaim,
  renewImportClaim,
} from "../db/operations/userImports/jobs.ts";
import { ClaimLost, runImport } from "../domain/identity/imports/importUsers.ts";
import { PASSWORD_RETENTION_MS } from "../domain/identity/imports/results.ts";
import { PasswordHasher } from "../domain/identity/password.ts";
import { type SecretKey, WebhookSecretBox } from "../domain/webhooks/secretBox.ts";
import { DomainError } from "../errors.ts";

export interface UserImportLoopOptions {
  /** Seal the temporary passwords; the API's BERTH_WEBHOOK_SECRET_KEYS, which opens them for the importer. */
  secretKeys: readonly SecretKey[];
  /** Jobs run at once by this worker; default 1 (rows are sequential per job; the database is the bound). */
  concurrency?: number;
  /** How often to look for jobs; default 1 s. */
  intervalMs?: number;
  /** How long a claim holds without news; default 60 s (a chunk of 50 rows takes well under that). */
  claimMs?: number;
  /** Claims of one job before it is ended failed; default 3. */
  attempts?: number;
}

export class UserImportLoop {
  readonly #db: Knex;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #box: WebhookSecretBox;
  readonly #hasher = new PasswordHasher();
  readonly #o: Required<Omit<UserImportLoopOptions, "secretKeys">>;
  readonly #identity = `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  readonly #running = new Map<string, { stop: { stopped: boolean }; done: Promise<void> }>();
  readonly #loop: PeriodicPass;

  constructor(o: { db: Knex; log: Logger; clock?: Clock } & UserImportLoopOptions) {
    this.#db = o.db;
    this.#log = o.log.child({ component: "user-imports" });
    this.#clock = o.clock ?? { now: () => new Date() };
    this.#box = new WebhookSecretBox(o.secretKeys);
    this.#o = {
      concurrency: o.concurrency ?? 1,
      intervalMs: o.intervalMs ?? 1000,
      claimMs: o.claimMs ?? 60_000,
      attempts: o.attempts ?? 3,
    };
    this.#loop = new PeriodicPass({
      intervalMs: this.#o.intervalMs,
      pass: () => this.poll(),
      onError: (err) => this.#log.warn({ err }, "looking for user imports failed; retried"),
    });
  }

  get identity(): string {
    return this.#identity;
  }

  start(): void {
    this.#loop.start();
  }

  /** Stops claiming; jobs in flight stop before their next chunk (their claims run out and a leader resumes them). */
  async stop(): Promise<void> {
    await this.#loop.stop();
    for (const r of this.#running.values()) r.stop.stopped = true;
    await Promise.allSettled([...this.#running.values()].map((r) => r.done));
  }

  /** Erases expired passwords, claims what there is room for and starts it (tests call it directly). */
  async poll(): Promise<void> {
    const now = this.#clock.now();
    const expired = await expireSealedPasswords(this.#db, new Date(now.getTime() - PASSWORD_RETENTION_MS), now, 100);
    if (expired > 0) this.#log.info({ jobs: expired }, "erased unfetched temporary passwords past retention");
    const free = this.#o.concurrency - this.#running.size;
    if (free <= 0) return;
    const jobs = await claimImportJobs(this.#db, this.#identity, now, this.#until(), free);
    for (const job of jobs) {
      const stop = { stopped: false };
      const done = this.#run(job, stop).finally(() => this.#running.delete(job.id));
      this.#running.set(job.id, { stop, done });
    }
  }

  /** Resolves when no job is running here (tests). */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running.values()].map((r) => r.done));
  }

  #until(): Date {
    return new Date(this.#clock.now().getTime() + this.#o.claimMs);
  }

  async #end(job: ImportJobRow, state: "succeeded" | "failed", failure: { code: string; message: string } | null) {
    const counts = { create: 0, update: 0, unchanged: 0, error: 0, ...(await countImportRows(this.#db, job.id)) };
    await finishImportJob(this.#db, job.id, this.#identity, { state, counts, failure, at: this.#clock.now() });
    this.#log.info({ kind: "user_import", name: job.id, state, counts, failure }, "user import ended");
  }

  async #run(job: ImportJobRow, stop: { stopped: boolean }): Promise<void> {
    const log = this.#log.child({ kind: "user_import", name: job.id });
    if (job.attempts > this.#o.attempts) {
      await this.#end(job, "failed", {
        code: "import_interrupted",
        message: `the import stopped ${job.attempts - 1} times before its end; the rows done are recorded and counted, the rest were not run. Run the file again: rows done are unchanged.`,
      });
      return;
    }
    try {
      const counts = await runImport({ db: this.#db, clock: this.#clock, auth: { hasher: this.#hasher } }, job, {
        seal: (password, aad) => this.#box.seal(password, aad),
        keepClaim: async () => {
          if (stop.stopped) return false;
          return renewImportClaim(this.#db, job.id, this.#identity, this.#until());
        },
      });
      await finishImportJob(this.#db, job.id, this.#identity, {
        state: "succeeded",
        counts,
        failure: null,
        at: this.#clock.now(),
      });
      log.info({ counts }, "user import succeeded");
    } catch (err) {
      if (err instanceof ClaimLost) {
        log.info("user import stopped before its end; the next claim resumes it");
        return;
      }
      if (err instanceof DomainError) {
        // The job itself is refused (its administrator lost the right, the file no longer reads): final.
        await this.#end(job, "failed", { code: err.code, message: err.message });
        return;
      }
      // Anything else (the database went away): let go of the claim so a pass soon tries again, up to
      // `attempts` claims in all.
      log.warn({ err }, "user import failed; tried again");
      await releaseImportClaim(this.#db, job.id, this.#identity, this.#clock.now()).catch((e: unknown) =>
        log.warn({ err: e }, "letting go of the claim failed; it runs out by itself"),
      );
    }
  }
}
