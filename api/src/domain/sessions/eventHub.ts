// One per API process: LISTENs on `berth_session_events` (the trigger on `session_events` notifies at
// commit), reads the rows it has not delivered yet, in seq order, and hands each to the subscribers that
// may see it. Every replica does the same, so a client may connect to any of them.
//
// Trap: seq is taken at insert, rows become visible at commit; two writers could commit out of seq order.
// Migration 20261122000200 now draws seqs in commit order; the hole tracking below stays as a defence.
// A read that sees seq 11 before seq 10 commits would skip 10 for ever if it only asked "after 11". So the
// hub remembers holes it saw and keeps asking from the oldest unresolved hole for a while (10 s, after
// which the hole is taken for a rolled-back insert), delivering each seq once.
import type { Knex } from "knex";
import type { Logger } from "pino";
import { lastSessionEventSeq } from "../../db/operations/sessions/sessionEvents.ts";
import type { SessionEventRow } from "../../db/operations/sessions/types.ts";

export const SESSION_EVENTS_CHANNEL = "berth_session_events";
const HOLE_TTL_MS = 10_000;
const BATCH = 500;

export interface Subscriber {
  /** Called with every committed event, in seq order; the subscriber filters. */
  deliver(row: SessionEventRow): void;
  /** Ends the subscriber's stream (the LISTEN connection broke, or the hub closed): its client reconnects. */
  close?(): void;
}

interface PgConnection {
  query(sql: string): Promise<unknown>;
  on(event: "notification", fn: (msg: { channel: string; payload?: string }) => void): void;
  on(event: "error", fn: (err: Error) => void): void;
  removeAllListeners(event?: string): void;
}

export class SessionEventHub {
  readonly #db: Knex;
  readonly #log: Logger;
  readonly #subs = new Set<Subscriber>();
  #conn: PgConnection | undefined;
  #starting: Promise<void> | undefined;
  /** The last giving back of the LISTEN connection (settled when none is under way). */
  #releasing: Promise<void> = Promise.resolve();
  #last = 0n;
  readonly #holes = new Map<bigint, number>(); // seq -> first seen missing (ms)
  readonly #delivered = new Set<bigint>(); // delivered seqs above the oldest hole
  #pumping = false;
  /** The read in flight (or the last one, settled): close waits for it. */
  #pumped: Promise<void> = Promise.resolve();
  #again = false;
  #closed = false;
  /** Test and metrics aid. */
  delivered = 0;

  constructor(db: Knex, log: Logger) {
    this.#db = db;
    this.#log = log.child({ component: "session-event-hub" });
  }

  get lastSeq(): string {
    return this.#last.toString();
  }

  async subscribe(s: Subscriber): Promise<() => void> {
    if (this.#closed) {
      // The process is stopping: no new LISTEN connection; the client reconnects to another replica.
      s.close?.();
      return () => {};
    }
    this.#subs.add(s);
    try {
      await this.#ensureListening();
    } catch (err) {
      // Its stream fails (the client reconnects): it must not stay subscribed, delivered to and holding
      // the LISTEN connection for a response long gone.
      this.#subs.delete(s);
      if (this.#subs.size === 0) void this.#release();
      throw err;
    }
    return () => {
      this.#subs.delete(s);
      if (this.#subs.size === 0) void this.#release();
    };
  }

  async #ensureListening(): Promise<void> {
    if (this.#conn) return;
    this.#starting ??= (async () => {
      const conn = (await this.#db.client.acquireConnection()) as PgConnection;
      let broken = false;
      conn.on("notification", (msg) => {
        if (msg.channel === SESSION_EVENTS_CHANNEL) this.#pump();
      });
      conn.on("error", (err) => {
        broken = true;
        if (this.#conn !== conn) return; // still being set up: the failure below gives it back
        this.#log.warn({ err }, "the LISTEN connection failed; subscribers will reconnect");
        void this.#release(true);
      });
      try {
        await conn.query(`LISTEN ${SESSION_EVENTS_CHANNEL}`);
        // Start after what exists: subscribers replay older events themselves (Last-Event-ID).
        if (this.#last === 0n) this.#last = BigInt(await lastSessionEventSeq(this.#db));
        if (broken) throw new Error("the LISTEN connection failed while it was set up");
      } catch (err) {
        // Given back, or the pool would lend one connection fewer after every failed start (a Postgres
        // restart under open streams), until no request could get one.
        conn.removeAllListeners("notification");
        await this.#db.client.releaseConnection(conn).catch(() => {});
        throw err;
      }
      this.#conn = conn;
    })().finally(() => {
      this.#starting = undefined;
    });
    await this.#starting;
  }

  /**
   * Gives the LISTEN connection back. A call that finds it already being given back (the last subscriber
   * left just before close()) waits for that, so that close() returns with the connection back in the pool.
   */
  #release(broken = false): Promise<void> {
    const conn = this.#conn;
    this.#conn = undefined;
    if (!conn) return this.#releasing;
    const done = (async () => {
      conn.removeAllListeners("notification");
      try {
        if (!broken) await conn.query(`UNLISTEN ${SESSION_EVENTS_CHANNEL}`);
      } finally {
        await this.#db.client.releaseConnection(conn);
      }
      if (broken) for (const s of [...this.#subs]) s.close?.();
    })();
    this.#releasing = done.catch(() => {});
    return done;
  }

  /** Reads and delivers everything new; coalesces notifications that arrive meanwhile. */
  #pump(): void {
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    this.#pumping = true;
    this.#pumped = (async () => {
      try {
        do {
          this.#again = false;
          await this.#readOnce();
        } while (this.#again && !this.#closed);
      } catch (err) {
        this.#log.warn({ err }, "reading session events failed; the next notification retries");
      } finally {
        this.#pumping = false;
      }
    })();
  }

  async #readOnce(): Promise<void> {
    const now = Date.now();
    for (const [seq, since] of this.#holes) if (now - since > HOLE_TTL_MS) this.#holes.delete(seq);
    const floor = this.#holes.size > 0 ? [...this.#holes.keys()].reduce((a, b) => (a < b ? a : b)) - 1n : this.#last;
    for (const d of this.#delivered) if (d <= floor) this.#delivered.delete(d);
    for (;;) {
      const rows = (await this.#db("session_events")
        .where("seq", ">", floor.toString())
        .orderBy("seq", "asc")
        .limit(BATCH)) as SessionEventRow[];
      let expected = this.#last + 1n;
      for (const row of rows) {
        const seq = BigInt(row.seq);
        if (seq <= this.#last && !this.#holes.has(seq)) continue;
        if (this.#delivered.has(seq)) continue;
        if (seq > this.#last) {
          for (let h = expected; h < seq; h++) if (!this.#holes.has(h)) this.#holes.set(h, now);
          this.#last = seq;
          expected = seq + 1n;
        } else this.#holes.delete(seq);
        if (this.#holes.size > 0) this.#delivered.add(seq);
        this.delivered++;
        for (const s of this.#subs) s.deliver(row);
      }
      if (rows.length < BATCH) return;
    }
  }

  /**
   * Ends every stream and gives the LISTEN connection back: a stopping API calls it first, since an open
   * stream would keep its server from closing and the held connection would keep the pool from closing.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const subs = [...this.#subs];
    this.#subs.clear();
    for (const s of subs) s.close?.();
    // A LISTEN being set up finishes first, so that its connection is given back too; so does a read in
    // flight, whose connection would otherwise still be lent out after close (seen under load).
    await this.#starting?.catch(() => {});
    await this.#pumped;
    await this.#release();
  }
}
