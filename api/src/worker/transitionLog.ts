// The worker's transitions written in batches: every insert into session_events holds the stream's
// commit-order lock until its transaction commits (migration 20261122000200), so one transaction per
// transition serialized the whole worker on that lock, a round trip each. A batch is one transaction
// with one UPDATE and one INSERT for all its sessions; calls that come while the writers are busy form
// the next batch. What each transition writes is decided in transitionPlan.ts.
import type { InterimStatus, Session } from "@berth/crds";
import type { Knex } from "knex";
import type { Logger } from "pino";
import { type SessionTransition, updateSessionsFromTransitions } from "../db/operations/sessions/recordTransitions.ts";
import { insertSessionEvents } from "../db/operations/sessions/sessionEvents.ts";
import { viewFromResource } from "../db/operations/sessions/view.ts";
import { isDatabaseUnreachable } from "../db/unreachable.ts";
import { notify } from "../domain/notifications/notify.ts";
import { sessionEventOf } from "../domain/sessions/events.ts";
import { bellFor, transitionOf } from "./transitionPlan.ts";

/** An interim record of a worker that another has fenced off (it no longer leads). */
export class FencedOff extends Error {
  constructor(term: number, current: number) {
    super(`this worker's term ${term} was fenced off by term ${current}: it no longer leads`);
  }
}

interface PendingTransition {
  before: Session;
  after: Session;
  interim?: InterimStatus;
  resolve(): void;
  reject(err: unknown): void;
}

const nameOf = (p: PendingTransition) => p.after.metadata.name as string;

/**
 * Records transitions in batches. Calls made together (in one turn of the event loop) form one batch;
 * up to `writers` batches are written at once, and calls that arrive while all are busy wait and form
 * the next (at most `maxBatch` each). A session's transitions are recorded in the order of the calls: a
 * batch never holds two of one session, nor one of a session whose earlier transition is still being
 * written. A batch that fails is written again one transition at a time, so one bad transition costs
 * the others nothing.
 */
export class TransitionLog {
  readonly #db: Knex;
  readonly #log: Logger;
  readonly #maxBatch: number;
  readonly #maxWriters: number;
  #pending: PendingTransition[] = [];
  /** Sessions with a transition in a batch being written. */
  readonly #writing = new Set<string>();
  #writers = 0;
  #scheduled = false;
  /** Transactions written (batches and single retries): for tests and the bench. */
  transactions = 0;
  /** This worker's fencing term (worker_fence), once it leads: interim records check it. */
  term: number | undefined;

  constructor(db: Knex, log: Logger, opts: { maxBatch?: number; writers?: number } = {}) {
    this.#db = db;
    this.#log = log;
    this.#maxBatch = opts.maxBatch ?? 500;
    this.#maxWriters = opts.writers ?? 4;
  }

  record(before: Session, after: Session, interim?: InterimStatus): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ before, after, ...(interim ? { interim } : {}), resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      queueMicrotask(() => {
        this.#scheduled = false;
        this.#pump();
      });
    });
  }

  #pump(): void {
    while (this.#writers < this.#maxWriters) {
      const batch = this.#take();
      if (batch.length === 0) return;
      this.#writers++;
      void this.#flush(batch).finally(() => {
        this.#writers--;
        for (const p of batch) this.#writing.delete(nameOf(p));
        this.#pump();
      });
    }
  }

  #take(): PendingTransition[] {
    const batch: PendingTransition[] = [];
    const rest: PendingTransition[] = [];
    for (const p of this.#pending) {
      const name = nameOf(p);
      // A session already in this batch or in one being written: its later transition waits.
      if (batch.length < this.#maxBatch && !this.#writing.has(name)) {
        batch.push(p);
        this.#writing.add(name);
      } else rest.push(p);
    }
    this.#pending = rest;
    return batch;
  }

  async #flush(batch: PendingTransition[]): Promise<void> {
    try {
      await this.#write(batch);
      for (const p of batch) p.resolve();
    } catch (err) {
      // One by one helps only when one transition spoiled the batch (a fenced-off interim record spoils
      // it for the resource's records beside it); an unreachable database would make each wait its own
      // connection timeout.
      if (batch.length === 1 || isDatabaseUnreachable(err)) {
        for (const p of batch) p.reject(err);
        return;
      }
      this.#log.warn({ err: String(err), transitions: batch.length }, "a batch of transitions failed; one by one");
      for (const p of batch) {
        try {
          await this.#write([p]);
          p.resolve();
        } catch (e) {
          p.reject(e);
        }
      }
    }
  }

  async #write(batch: readonly PendingTransition[]): Promise<void> {
    this.transactions++;
    await this.#db.transaction(async (tx) => {
      // Held (FOR SHARE) until commit: a new leader's fence waits for this record, then sees it.
      if (this.term !== undefined && batch.some((p) => p.interim)) {
        const fence = (await tx("worker_fence").where({ id: 1 }).forShare().first("term")) as
          | { term: string }
          | undefined;
        const current = Number(fence?.term ?? 0);
        if (current !== this.term) throw new FencedOff(this.term, current);
      }
      const transitions = batch.map((p) => transitionOf(p.after, p.interim));
      const rows = await updateSessionsFromTransitions(tx, transitions, new Date());
      const byId = new Map(rows.map((r) => [r.id, r]));
      const events = batch.flatMap((p, i) => {
        const row = byId.get((transitions[i] as SessionTransition).id);
        if (!row) {
          this.#log.warn(
            { session: p.after.metadata.name },
            "a Session resource without a history row; its change is not recorded",
          );
          return [];
        }
        return [
          sessionEventOf("session.updated", row, viewFromResource(row, p.after), p.before.status?.phase ?? "Pending"),
        ];
      });
      // In the order of the calls: the stream's seqs follow it.
      await insertSessionEvents(tx, events);
      await notify(
        tx,
        batch.flatMap((p, i) => {
          const row = byId.get((transitions[i] as SessionTransition).id);
          return row ? bellFor(p.before, p.after, row) : [];
        }),
      );
    });
  }
}
