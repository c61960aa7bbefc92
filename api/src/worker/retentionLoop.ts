// Retention, a leader-only loop of the worker: audit rows older than the audit retention (365 days by
// default) and notifications older than 90 days are deleted in small batches (one short transaction
// each, a pause between), so a first run over a year of backlog never holds a long lock or a big WAL
// burst. A failing pass is logged and retried on the next one.
import { PeriodicPass } from "@berth/controllers/kube";
import type { Knex } from "knex";
import type { Logger } from "pino";
import type { Clock } from "../clock.ts";
import { purgeAuditRecords } from "../db/operations/audit/purgeAuditRecords.ts";
import { purgeNotifications } from "../db/operations/notifications/purgeNotifications.ts";

export interface RetentionOptions {
  /** Default 365. */
  auditRetentionDays?: number;
  /** Default 90. */
  notificationRetentionDays?: number;
  /** Rows per batch; default 500. */
  batch?: number;
  /** Batches per pass (the rest waits for the next pass); default 200. */
  maxBatchesPerPass?: number;
  /** Default 10 minutes. */
  intervalMs?: number;
  /** Pause between batches; default 50 ms. */
  pauseMs?: number;
}

const DAY = 86_400_000;

export class RetentionLoop {
  readonly #db: Knex;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #o: Required<RetentionOptions>;
  readonly #loop: PeriodicPass;
  /** Set by stop(): a pass in progress ends after its current batch. */
  #halting = false;

  constructor(o: { db: Knex; log: Logger; clock?: Clock } & RetentionOptions) {
    this.#db = o.db;
    this.#log = o.log.child({ component: "retention" });
    this.#clock = o.clock ?? { now: () => new Date() };
    this.#o = {
      auditRetentionDays: o.auditRetentionDays ?? 365,
      notificationRetentionDays: o.notificationRetentionDays ?? 90,
      batch: o.batch ?? 500,
      maxBatchesPerPass: o.maxBatchesPerPass ?? 200,
      intervalMs: o.intervalMs ?? 600_000,
      pauseMs: o.pauseMs ?? 50,
    };
    this.#loop = new PeriodicPass({
      intervalMs: this.#o.intervalMs,
      pass: () => this.pass(),
      onError: (err) => this.#log.warn({ err }, "retention pass failed; retried on the next pass"),
    });
  }

  start(): void {
    if (this.#loop.running) return;
    this.#halting = false;
    this.#loop.start();
  }

  async stop(): Promise<void> {
    this.#halting = true;
    await this.#loop.stop();
  }

  /** One pass: returns how many rows each table lost. */
  async pass(): Promise<{ audit: number; notifications: number }> {
    const now = this.#clock.now().getTime();
    const audit = await this.#drain((n) =>
      purgeAuditRecords(this.#db, new Date(now - this.#o.auditRetentionDays * DAY), n),
    );
    const notifications = await this.#drain((n) =>
      purgeNotifications(this.#db, new Date(now - this.#o.notificationRetentionDays * DAY), n),
    );
    if (audit + notifications > 0) this.#log.info({ audit, notifications }, "retention purged rows");
    return { audit, notifications };
  }

  async #drain(batch: (n: number) => Promise<number>): Promise<number> {
    let total = 0;
    for (let i = 0; i < this.#o.maxBatchesPerPass && !this.#halting; i++) {
      const n = await batch(this.#o.batch);
      total += n;
      if (n < this.#o.batch) break;
      await new Promise((r) => setTimeout(r, this.#o.pauseMs));
    }
    return total;
  }
}
