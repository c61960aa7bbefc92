import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "./config.test-support.ts";
import { createTestDatabase, type TestDatabase } from "./db/db.test-support.ts";
import { connect } from "./db/knex.ts";
import { relayTo } from "./db/relay.test-support.ts";
import { type RunningApi, startApi } from "./main.ts";

describe("startApi", () => {
  let t: TestDatabase;
  let api: RunningApi;
  beforeAll(async () => {
    t = await createTestDatabase({ migrate: false });
    api = await startApi({
      config: testConfig({ DATABASE_URL: t.url, BERTH_INTERNAL_ALLOW_CIDRS: "127.0.0.1/32", BERTH_INTERNAL_PORT: "0" }),
      startupTasks: [],
    });
  });
  afterAll(async () => {
    await api?.stop();
    await t?.drop();
  });

  it("migrates the database, listens and answers /healthz", async () => {
    expect((await t.db.raw("select count(*)::int as n from knex_migrations")).rows[0].n).toBeGreaterThan(0);
    const res = await fetch(`${api.url}/healthz`);
    expect(res.status).toBe(200);
  });

  it("exposes process metrics next to the request counters on the metrics listener, not the public one", async () => {
    expect((await fetch(`${api.url}/metrics`)).status).toBe(404);
    const text = await (await fetch(`${api.metricsUrl}/metrics`)).text();
    expect(text).toContain("process_cpu_user_seconds_total");
    expect(text).toContain("berth_http_requests_total");
  });

  it("opens the internal listener when configured and answers it with the envelope", async () => {
    expect(api.internalUrl).toBeDefined();
    const res = await fetch(`${api.internalUrl}/internal/nothing`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });

  it("stops idempotently", async () => {
    const other = await startApi({ config: testConfig({ DATABASE_URL: t.url }), startupTasks: [] });
    await Promise.all([other.stop(), other.stop()]);
    await expect(fetch(`${other.url}/healthz`)).rejects.toThrow();
  });

  it("waits for a Postgres that does not answer yet, then starts; gives up at its deadline in words", async () => {
    // A partition: connections are accepted and left waiting, as a Postgres pod still starting behind its
    // Service looked on a first install.
    const relay = await relayTo(t.url);
    const lines: string[] = [];
    const log = pino({ level: "info" }, { write: (l: string) => void lines.push(l) });
    const config = testConfig({ DATABASE_URL: relay.url });
    const db = connect(relay.url, { connectTimeoutMs: 500 });
    const fresh = connect(relay.url, { connectTimeoutMs: 500 });
    relay.hang();
    try {
      const starting = startApi({ config, db, log, startupTasks: [], migrate: false });
      await expect.poll(() => lines.some((l) => l.includes("waiting for Postgres")), { timeout: 30_000 }).toBe(true);
      relay.heal();
      const late = await starting;
      try {
        expect((await fetch(`${late.url}/healthz`)).status).toBe(200);
        expect(lines.some((l) => l.includes("Postgres answers"))).toBe(true);
      } finally {
        await late.stop();
      }
      relay.hang();
      await expect(
        startApi({ config, db: fresh, log, startupTasks: [], migrate: false, databaseWaitMs: 1_500 }),
      ).rejects.toThrow(/Postgres did not answer within 2 s/);
    } finally {
      await Promise.all([db.destroy(), fresh.destroy()]);
      await relay.cut();
    }
  });
});
