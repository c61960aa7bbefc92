import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "./config.test-support.ts";
import { createTestDatabase, type TestDatabase } from "./db/db.test-support.ts";
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
});
