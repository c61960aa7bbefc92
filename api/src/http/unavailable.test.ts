// A database that cannot be reached is a retryable 503 `unavailable` for the caller, never a 500.
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type Db } from "../db/knex.ts";
import { isDatabaseUnreachable } from "../db/unreachable.ts";
import { aPrincipal, fakeAuthenticator, startTestApi, type TestApi, testDeps } from "./http.test-support.ts";
import { testRoutes } from "./layer-fixtures.test-support.ts";

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
    ["a non-error", "nope"],
  ])("is false for %s", (_, err) => {
    expect(isDatabaseUnreachable(err)).toBe(false);
  });
});
