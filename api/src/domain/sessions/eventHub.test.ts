// The SSE hub on a real Postgres: events arrive through LISTEN/NOTIFY in seq order, once each.
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db/db.test-support.ts";
import { connect } from "../../db/knex.ts";
import { insertSessionEvents } from "../../db/operations/sessions/sessionEvents.ts";
import type { SessionEventRow } from "../../db/operations/sessions/types.ts";
import { SessionEventHub } from "./eventHub.ts";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

const ev = (session: string) => ({
  session_id: session,
  owner_id: "usr_1",
  organization_id: "org_1",
  project_id: null,
  type: "session.updated",
  payload: { view: {} },
});
const until = async (cond: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  expect(cond()).toBe(true);
};

describe("the session event hub", () => {
  it("delivers committed events in seq order, and seqs follow commit order", async () => {
    const hub = new SessionEventHub(t.db, pino({ level: "silent" }));
    const got: SessionEventRow[] = [];
    const unsubscribe = await hub.subscribe({ deliver: (r) => got.push(r) });
    onTestFinished(async () => {
      unsubscribe();
      await hub.close();
    });
    await insertSessionEvents(t.db, [ev("s1")]);
    await until(() => got.length === 1);

    // A transaction inserts an event and stays open: a later insert waits for it (migration
    // 20261122000200 draws seqs in commit order), so no reader can see a later seq first. The test
    // waits for the slow insert itself, not a fixed delay, so a busy machine cannot reorder the two.
    const { promise: held, resolve: release } = Promise.withResolvers<void>();
    const { promise: slowInserted, resolve: inserted } = Promise.withResolvers<void>();
    const slow = t.db.transaction(async (tx) => {
      await insertSessionEvents(tx, [ev("slow")]);
      inserted();
      await held;
    });
    try {
      await slowInserted;
      const fast = insertSessionEvents(t.db, [ev("fast")]);
      // The fast insert has reached the commit-order lock and waits there: nothing of it can be read yet.
      for (const t0 = Date.now(); ; ) {
        const { rows } = await t.db.raw(`SELECT count(*)::int AS n FROM pg_locks
            WHERE NOT granted AND locktype = 'advisory'
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`);
        if ((rows[0] as { n: number }).n > 0) break;
        if (Date.now() - t0 > 5000) throw new Error("the second insert never waited for the first");
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(got.map((r) => r.session_id)).toEqual(["s1"]);
      release();
      await slow;
      await fast;
    } finally {
      release(); // a failed expectation must not leave the transaction holding its connection
    }
    await until(() => got.length === 3);
    expect(got.map((r) => r.session_id)).toEqual(["s1", "slow", "fast"]);
    expect(new Set(got.map((r) => r.seq)).size).toBe(got.length);
  });

  it("on close ends every stream, gives its connection back, and turns later subscribers away", async () => {
    const hub = new SessionEventHub(t.db, pino({ level: "silent" }));
    onTestFinished(() => hub.close()); // also when an expectation fails: the database is dropped after
    const ended: string[] = [];
    await hub.subscribe({ deliver: () => {}, close: () => ended.push("a") });
    await hub.subscribe({ deliver: () => {}, close: () => ended.push("b") });
    const pool = (t.db.client as { pool: { numUsed(): number } }).pool;
    expect(pool.numUsed()).toBe(1); // the LISTEN connection
    await hub.close();
    expect(ended.sort()).toEqual(["a", "b"]);
    expect(pool.numUsed()).toBe(0);
    const unsubscribe = await hub.subscribe({ deliver: () => {}, close: () => ended.push("late") });
    expect(ended).toContain("late");
    expect(pool.numUsed()).toBe(0);
    unsubscribe();
  });

  it("close() just after the last subscriber left waits until the connection is back in the pool", async () => {
    const db = connect(t.url, { poolMax: 2 });
    onTestFinished(() => db.destroy());
    const hub = new SessionEventHub(db, pino({ level: "silent" }));
    const pool = (db.client as { pool: { numUsed(): number } }).pool;
    const unsubscribe = await hub.subscribe({ deliver: () => {} });
    expect(pool.numUsed()).toBe(1);
    unsubscribe(); // starts giving the connection back (UNLISTEN, a round trip)
    await hub.close();
    expect(pool.numUsed()).toBe(0);
  });

  it("gives the connection back when its LISTEN fails (Postgres going away under it), and listens on the next try", async () => {
    // A pool of its own, so that a connection held for good shows as one fewer to lend.
    const db = connect(t.url, { poolMax: 2 });
    const hub = new SessionEventHub(db, pino({ level: "silent" }));
    onTestFinished(async () => {
      await hub.close();
      await db.destroy();
    });
    // The first connection lent is ended by the server before the hub's LISTEN reaches it, as a
    // Postgres stopping ends it.
    const client = db.client as { acquireConnection(): Promise<{ processID: number }>; pool: { numUsed(): number } };
    const acquire = client.acquireConnection.bind(client);
    let first = true;
    client.acquireConnection = async () => {
      const c = await acquire();
      if (first) {
        first = false;
        await t.db.raw("SELECT pg_terminate_backend(?)", [c.processID]);
      }
      return c;
    };
    const ended: string[] = [];
    await expect(hub.subscribe({ deliver: () => {}, close: () => ended.push("a") })).rejects.toThrow();
    expect(client.pool.numUsed()).toBe(0);

    const got: SessionEventRow[] = [];
    const unsubscribe = await hub.subscribe({ deliver: (r) => got.push(r) });
    await insertSessionEvents(t.db, [ev("after-the-failure")]);
    await until(() => got.length === 1);
    unsubscribe();
    // The failed subscriber was not kept: nothing was delivered to it, and closing does not end it again.
    expect(ended).toEqual([]);
  });
});
