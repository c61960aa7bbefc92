import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { testConfig } from "../config.test-support.ts";
import { createTestDatabase, type TestDatabase } from "../db/db.test-support.ts";
import { aPrincipal, fakeAuthenticator, startTestApi, type TestApi, TestClock, testDeps } from "./http.test-support.ts";
import { canonicalJson, claimIdempotencyKey, purgeExpiredIdempotencyKeys } from "./idempotency.ts";
import { createWidgetTable, knobs, testRoutes } from "./layerFixtures.test-support.ts";

const alice = aPrincipal();
const bob = aPrincipal();

describe("Idempotency-Key on creating writes", () => {
  let t: TestDatabase;
  let api: TestApi;
  const clock = new TestClock();
  const widgets = async () => Number((await t.db("test_widgets").count({ n: "*" }).first())?.n);
  const create = (key: string | undefined, json: unknown, token = "alice") =>
    api.call("/test/widgets", {
      method: "POST",
      token,
      json,
      ...(key === undefined ? {} : { headers: { "Idempotency-Key": key } }),
    });

  beforeAll(async () => {
    t = await createTestDatabase();
    await createWidgetTable(t.db);
    api = await startTestApi(
      testDeps({ db: t.db, clock, config: testConfig(), authenticate: fakeAuthenticator({ alice, bob }) }),
      testRoutes,
    );
  });
  afterAll(async () => {
    await api?.stop();
    await t?.drop();
  });
  beforeEach(() => {
    knobs.createDelayMs = 0;
    knobs.gate = undefined;
    knobs.fail500Once = false;
  });

  it("replays the original status, body and headers for a repeat and creates nothing new", async () => {
    const before = await widgets();
    const first = await create("key-replay-1", { name: "a" });
    expect(first.status).toBe(201);
    const firstBody = await first.json();
    expect(first.headers.get("idempotent-replayed")).toBeNull();

    const again = await create("key-replay-1", { name: "a" });
    expect(again.status).toBe(201);
    expect(await again.json()).toEqual(firstBody);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    expect(await widgets()).toBe(before + 1);
  });

  it("treats the same body with keys in another order as the same request", async () => {
    const first = await create("key-order", { name: "b", color: "red" });
    const again = await api.call("/test/widgets", {
      method: "POST",
      token: "alice",
      headers: { "Idempotency-Key": "key-order", "Content-Type": "application/json" },
      body: '{"color":"red","name":"b"}',
    });
    expect(again.status).toBe(first.status);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
  });

  it("refuses the same key with a different body with 422 idempotency_key_reused", async () => {
    await create("key-reused", { name: "c" });
    const before = await widgets();
    const res = await create("key-reused", { name: "d" });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("idempotency_key_reused");
    expect(await widgets()).toBe(before);
  });

  it("scopes keys to the caller: another user's same key is a new request", async () => {
    const a = await create("key-shared", { name: "e" }, "alice");
    const b = await create("key-shared", { name: "e" }, "bob");
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers.get("idempotent-replayed")).toBeNull();
    expect(((await b.json()) as { owner: string }).owner).toBe(bob.userId);
  });

  it("refuses a duplicate while the first is still in flight with 409 idempotency_request_in_flight", async () => {
    // The first is held inside its handler until the second has been answered.
    const { promise: gate, resolve: open } = Promise.withResolvers<void>();
    knobs.gate = gate;
    const first = create("key-inflight", { name: "f" });
    try {
      // The first holds the key once its row exists (a fixed delay loses that race on a busy machine).
      await expect
        .poll(() => t.db("idempotency_keys").where({ key: "key-inflight", state: "in_flight" }).first(), {
          timeout: 5_000,
          interval: 10,
        })
        .toBeTruthy();
      const second = await create("key-inflight", { name: "f" });
      expect(second.status).toBe(409);
      expect(((await second.json()) as { error: { code: string } }).error.code).toBe("idempotency_request_in_flight");
      expect(second.headers.get("retry-after")).not.toBeNull();
    } finally {
      open();
      knobs.gate = undefined;
    }
    expect((await first).status).toBe(201);
  });

  it("creates exactly one object for 20 parallel requests with the same key", async () => {
    knobs.createDelayMs = 50;
    const before = await widgets();
    const answers = await Promise.all(Array.from({ length: 20 }, () => create("key-parallel-20", { name: "g" })));
    const statuses = answers.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    expect(answers.filter((r) => r.status === 201 && r.headers.get("idempotent-replayed") === null)).toHaveLength(1);
    expect(await widgets()).toBe(before + 1);
    knobs.createDelayMs = 0;
    const after = await create("key-parallel-20", { name: "g" });
    expect(after.status).toBe(201);
    expect(after.headers.get("idempotent-replayed")).toBe("true");
  });

  it("forgets the key after an unexpected failure so the retry runs", async () => {
    knobs.fail500Once = true;
    const failed = await create("key-500", { name: "h" });
    expect(failed.status).toBe(500);
    const retry = await create("key-500", { name: "h" });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
  });

  it("creates anew once the key has expired, and purges expired keys", async () => {
    const before = await widgets();
    await create("key-expiry", { name: "i" });
    clock.advance(24 * 3600 + 1);
    const later = await create("key-expiry", { name: "j" });
    expect(later.status).toBe(201);
    expect(later.headers.get("idempotent-replayed")).toBeNull();
    expect(await widgets()).toBe(before + 2);

    clock.advance(24 * 3600 + 1);
    expect(await purgeExpiredIdempotencyKeys(t.db, clock.now())).toBeGreaterThan(0);
    expect(await t.db("idempotency_keys").where("expires_at", "<=", clock.now()).count({ n: "*" }).first()).toEqual({
      n: "0",
    });
  });

  it("lets a request take over a key left in flight by a crashed replica after the timeout", async () => {
    const now = clock.now();
    await t.db("idempotency_keys").insert({
      scope: `${alice.userId} POST /test/widgets`,
      key: "key-crashed",
      request_hash: "whatever-the-crashed-one-had",
      state: "in_flight",
      created_at: now,
      locked_at: now,
      expires_at: new Date(now.getTime() + 86_400_000),
    });
    // Same request as the crashed one: hash must match, so claim directly with its hash.
    const opts = { now, retentionSeconds: 86_400, inFlightTimeoutSeconds: 300 };
    await expect(
      claimIdempotencyKey(
        t.db,
        `${alice.userId} POST /test/widgets`,
        "key-crashed",
        "whatever-the-crashed-one-had",
        opts,
      ),
    ).rejects.toMatchObject({
      code: "idempotency_request_in_flight",
    });
    const later = { ...opts, now: new Date(now.getTime() + 301_000) };
    const r = await claimIdempotencyKey(
      t.db,
      `${alice.userId} POST /test/widgets`,
      "key-crashed",
      "whatever-the-crashed-one-had",
      later,
    );
    expect(r).toMatchObject({ kind: "claimed", claim: { tookOver: true } });
    // Only one of two racing take-overs wins.
    await t.db("idempotency_keys").where({ key: "key-crashed" }).update({ locked_at: now });
    const race = await Promise.allSettled(
      [1, 2, 3].map(() =>
        claimIdempotencyKey(
          t.db,
          `${alice.userId} POST /test/widgets`,
          "key-crashed",
          "whatever-the-crashed-one-had",
          later,
        ),
      ),
    );
    expect(race.filter((x) => x.status === "fulfilled")).toHaveLength(1);
  });

  it("refuses a malformed key with 400 validation_failed", async () => {
    const res = await create("has spaces and !", { name: "k" });
    expect(res.status).toBe(400);
    const e = ((await res.json()) as { error: { code: string; details: { issues: { path: string[] }[] } } }).error;
    expect(e.code).toBe("validation_failed");
    expect(e.details.issues[0]?.path).toEqual(["headers", "Idempotency-Key"]);
    const long = await create("x".repeat(256), { name: "k" });
    expect(long.status).toBe(400);
  });

  // Found by fuzzing: an empty header was taken as "no key" and the write went through.
  it("refuses a key sent empty, and creates nothing", async () => {
    const before = await widgets();
    const res = await create("", { name: "empty-key" });
    expect(res.status).toBe(400);
    expect(await widgets()).toBe(before);
  });

  it("creates every time without a key", async () => {
    const before = await widgets();
    await create(undefined, { name: "l" });
    await create(undefined, { name: "l" });
    expect(await widgets()).toBe(before + 2);
  });

  it("hashes JSON canonically", () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: null }], u: undefined })).toBe('{"a":[{"c":null,"d":2}],"b":1}');
  });
});
