import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db/db.test-support.ts";
import { TestClock } from "../../http/http.test-support.ts";
import { DEFAULT_THROTTLE, IN_FLIGHT_SECONDS, LoginThrottle } from "./throttle.ts";

describe("the sign-in throttle", () => {
  let t: TestDatabase;
  let clock: TestClock;
  let throttle: LoginThrottle;
  beforeAll(async () => {
    t = await createTestDatabase();
    clock = new TestClock();
    throttle = new LoginThrottle({ db: t.db, clock });
  });
  afterAll(async () => {
    await t?.drop();
  });

  const fail = async (email: string, source: string) => {
    const a = await throttle.begin(email, source);
    if (!a.refused) await a.failed();
    return a;
  };

  it("allows 5 failures per account and source in 15 minutes, then refuses until the oldest leaves the window", async () => {
    for (let i = 0; i < 5; i++) {
      expect((await fail("pair@example.test", "10.0.0.1")).refused).toBe(false);
      clock.advance(60);
    }
    const refused = await throttle.begin("pair@example.test", "10.0.0.1");
    expect(refused).toMatchObject({ refused: true, limit: "account_and_source" });
    // The first failure was 5 minutes ago: it leaves the 15-minute window in 10 minutes.
    expect(refused.refused && refused.retryAfterSeconds).toBe(10 * 60);
    // Another source is not held back by this pair.
    expect((await throttle.begin("pair@example.test", "10.0.0.2")).refused).toBe(false);
    clock.advance(10 * 60 + 1);
    expect((await throttle.begin("pair@example.test", "10.0.0.1")).refused).toBe(false);
  });

  it("does not count refused attempts: waiting out the window always works", async () => {
    for (let i = 0; i < 5; i++) await fail("patient@example.test", "10.0.1.1");
    for (let i = 0; i < 20; i++) expect((await throttle.begin("patient@example.test", "10.0.1.1")).refused).toBe(true);
    clock.advance(DEFAULT_THROTTLE.windowSeconds + 1);
    expect((await throttle.begin("patient@example.test", "10.0.1.1")).refused).toBe(false);
  });

  it("limits one source spraying many accounts to 50 failures", async () => {
    for (let i = 0; i < DEFAULT_THROTTLE.perSource; i++)
      expect((await fail(`spray${i}@example.test`, "10.0.2.1")).refused).toBe(false);
    clock.advance(IN_FLIGHT_SECONDS + 1);
    const r = await throttle.begin("fresh-victim@example.test", "10.0.2.1");
    expect(r).toMatchObject({ refused: true, limit: "source" });
    clock.advance(DEFAULT_THROTTLE.windowSeconds + 1);
  });

  it("limits one account guessed from many sources to 50 failures", async () => {
    for (let i = 0; i < DEFAULT_THROTTLE.perAccount; i++)
      expect((await fail("target@example.test", `10.1.${i}.1`)).refused).toBe(false);
    clock.advance(IN_FLIGHT_SECONDS + 1);
    const r = await throttle.begin("target@example.test", "10.9.9.9");
    expect(r).toMatchObject({ refused: true, limit: "account" });
    clock.advance(DEFAULT_THROTTLE.windowSeconds + 1);
  });

  it("does not refuse many people signing in at once from one address (pending sign-ins are not failures)", async () => {
    const results = await Promise.all(
      Array.from({ length: 80 }, (_, i) => throttle.begin(`colleague${i}@example.test`, "10.0.5.1")),
    );
    expect(results.every((r) => !r.refused)).toBe(true);
    await Promise.all(results.map((r) => (r.refused ? undefined : r.succeeded())));
  });

  it("lets at most 5 of a parallel burst through: each attempt is counted before it is checked", async () => {
    const results = await Promise.all(
      Array.from({ length: 30 }, () => throttle.begin("burst@example.test", "10.0.3.1")),
    );
    const admitted = results.filter((r) => !r.refused).length;
    expect(admitted).toBeGreaterThanOrEqual(1);
    expect(admitted).toBeLessThanOrEqual(DEFAULT_THROTTLE.perAccountAndSource);
  });

  it("forgets an account's failures from a source on success, and drops rows older than the window", async () => {
    for (let i = 0; i < 4; i++) await fail("ok@example.test", "10.0.4.1");
    clock.advance(DEFAULT_THROTTLE.windowSeconds + 1);
    await fail("old@example.test", "10.0.4.2");
    clock.advance(DEFAULT_THROTTLE.windowSeconds + 1);
    const a = await throttle.begin("ok@example.test", "10.0.4.1");
    expect(a.refused).toBe(false);
    if (!a.refused) await a.succeeded();
    expect(await t.db("login_failures").where({ email: "ok@example.test" })).toEqual([]);
    expect(await t.db("login_failures").where({ email: "old@example.test" })).toEqual([]);
  });
});
