// A database that cannot be reached, or stops answering, is a retryable 503 `unavailable` for the caller,
// never a 500 and never a request left waiting.
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../db/db.test-support.ts";
import { connect, type Db } from "../db/knex.ts";
import { type Relay, relayTo } from "../db/relay.test-support.ts";
import { isDatabaseUnreachable } from "../db/unreachable.ts";
import { aPrincipal, fakeAuthenticator, startTestApi, type TestApi, testDeps } from "./http.test-support.ts";
import { createWidgetTable, testRoutes } from "./layerFixtures.test-support.ts";

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

describe("a database that cannot be reached", () => {
  let db: Db;
  let api: TestApi;
  beforeAll(async () => {
    db = connect(`postgres://berth:berth@127.0.0.1:${await closedPort()}/berth`, { poolMax: 1 });
    api = await startTestApi(testDeps({ db, authenticate: fakeAuthenticator({ alice: aPrincipal() }) }), testRoutes);
  });
  afterAll(async () => {
    await api?.stop();
    await db?.destroy();
  });

  it("answers a read with 503 unavailable in the envelope", async () => {
    const res = await api.call("/test/widgets", { token: "alice" });
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { code: string; request_id: string } };
    expect(body.error.code).toBe("unavailable");
    expect(body.error.request_id).toBe(res.headers.get("x-request-id"));
  });

  it("answers a write with 503 unavailable too", async () => {
    const res = await api.call("/test/widgets", { method: "POST", token: "alice", json: { name: "w" } });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unavailable");
  });
});

describe("isDatabaseUnreachable", () => {
  const withCode = (code: string) => Object.assign(new Error("x"), { code });
  it.each([
    ["a refused connection", withCode("ECONNREFUSED")],
    ["a reset connection", withCode("ECONNRESET")],
    ["a server shutting down (57P01)", withCode("57P01")],
    ["a server starting up (57P03)", withCode("57P03")],
    ["too many connections (53300)", withCode("53300")],
    ["a connection exception (class 08)", withCode("08006")],
    [
      "a pool that gave no connection in time",
      Object.assign(new Error("Knex: Timeout acquiring a connection"), { name: "KnexTimeoutError" }),
    ],
    ["a connection lost mid-query", new Error("Connection terminated unexpectedly")],
    ["the same, as knex reports it", new Error("BEGIN; - Connection terminated unexpectedly")],
    ["a client cut before the query", new Error("Client has encountered a connection error and is not queryable")],
    ["a query unanswered past the client's timeout", new Error("select 1 - Query read timeout")],
    ["a connection not accepted within the client's timeout", new Error("timeout expired")],
  ])("is true for %s", (_, err) => {
    expect(isDatabaseUnreachable(err)).toBe(true);
  });
  it.each([
    ["a unique violation (23505)", withCode("23505")],
    ["a serialization failure (40001)", withCode("40001")],
    ["a plain bug", new TypeError("x is undefined")],
    [
      "a unique violation whose statement quotes a caller's text",
      Object.assign(new Error("insert into t values ('a - Connection terminated') - duplicate key value"), {
        code: "23505",
      }),
    ],
    ["an error quoting the text mid-message", new Error("select ' - Connection terminated' - bad input")],
    ["a statement that quotes the connect timeout's words", new Error("select 'timeout expired' - bad input")],
    ["a non-error", "nope"],
  ])("is false for %s", (_, err) => {
    expect(isDatabaseUnreachable(err)).toBe(false);
  });
});

describe("a database that hangs (a partition: nothing answers and nothing refuses)", () => {
  let t: TestDatabase;
  let relay: Relay;
  let db: Db;
  let api: TestApi;
  const alice = { token: "alice" };
  beforeAll(async () => {
    t = await createTestDatabase();
    await createWidgetTable(t.db);
    relay = await relayTo(t.url);
    // Timeouts a test can wait for; the defaults are 30 s and 10 s.
    db = connect(relay.url, { poolMax: 2, queryTimeoutMs: 2000, connectTimeoutMs: 2000 });
    api = await startTestApi(testDeps({ db, authenticate: fakeAuthenticator({ alice: aPrincipal() }) }), testRoutes);
  });
  afterAll(async () => {
    await api?.stop();
    await relay?.cut();
    await db?.destroy();
    await t?.drop();
  });

  // Without a client-side timeout a request would wait until TCP gave up, minutes later: each call here
  // gives up after 20 s, so a hang fails the test instead of the run.
  const call = (path: string, init: Parameters<TestApi["call"]>[1] = {}) =>
    api.call(path, { ...alice, ...init, signal: AbortSignal.timeout(20_000) });
  const create = (name: string) =>
    call("/test/widgets", { method: "POST", json: { name }, headers: { "Idempotency-Key": `hang-${name}` } });

  it("answers reads and writes 503 unavailable, then serves again once it answers, with nothing half-written", async () => {
    // Before the hang, as often as a loaded machine needs (the timeouts are short here).
    await expect.poll(async () => (await call("/test/widgets")).status).toBe(200);
    await expect.poll(async () => (await create("before")).status).toBe(201);

    relay.hang();
    const answers = await Promise.all([call("/test/widgets"), create("during"), call("/test/widgets")]);
    for (const res of answers) {
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unavailable");
    }

    relay.heal();
    await expect.poll(async () => (await call("/test/widgets")).status).toBe(200);
    // The write that was refused is retried with its key: made once, the refused attempt left nothing.
    expect((await create("during")).status).toBe(201);
    expect(await t.db("test_widgets").where({ name: "during" }).count({ n: "*" })).toEqual([{ n: "1" }]);
  });

  it("closes a connection whose query went unanswered and never lends it again: pg would queue the next query behind it", async () => {
    const one = connect(relay.url, { poolMax: 1, queryTimeoutMs: 2000, connectTimeoutMs: 2000 });
    /** The connection's backend, or -1 when this try got none (a loaded machine). */
    const backend = async () =>
      (await one.raw("SELECT pg_backend_pid() AS pid").catch(() => ({ rows: [{ pid: -1 }] }))).rows[0].pid as number;
    try {
      let before = -1;
      await expect.poll(async () => (before = await backend())).not.toBe(-1);
      const open = relay.clients();
      relay.hang();
      const err = await one.raw("SELECT 2").catch((e: unknown) => e);
      expect(isDatabaseUnreachable(err)).toBe(true);
      // Closed at the timeout, not when next lent: a transaction's ROLLBACK fails at once instead of
      // waiting a second timeout behind the unanswered query.
      await expect.poll(() => relay.clients()).toBe(open - 1);
      relay.heal();
      let after = -1;
      await expect.poll(async () => (after = await backend())).not.toBe(-1);
      expect(after).not.toBe(before);
      // Postgres ends the abandoned backend once the close reaches it; nothing is left holding a transaction.
      await expect
        .poll(
          async () =>
            (await t.db.raw("SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ?", [before])).rows[0].n,
        )
        .toBe(0);
    } finally {
      relay.heal();
      await one.destroy();
    }
  });
});
