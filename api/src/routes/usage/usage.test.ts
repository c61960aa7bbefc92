import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db/db.test-support.ts";
import { insertUsageSamples } from "../../db/operations/inventory/insertUsageSamples.ts";
import type { Deps } from "../../deps.ts";
import { dbClusters } from "../../domain/connect/adapters.ts";
import { aPrincipal, aSession, FakeSessions } from "../../domain/connect/connect.test-support.ts";
import type { ConnectDeps } from "../../domain/connect/deps.ts";
import { fakeAuthenticator, startTestApi, type TestApi, testDeps } from "../../http/http.test-support.ts";
import { usageRoutes } from "./routes.ts";

let tdb: TestDatabase;
let api: TestApi;
const sessions = new FakeSessions([aSession("ses_a").ownedBy("usr_alice"), aSession("ses_quiet").ownedBy("usr_alice")]);

const t0 = Date.parse("2026-11-22T10:00:00Z");
const sample = (i: number, over: Partial<{ gpu_utilization: number | null; gpu_memory_mib: number | null }> = {}) => ({
  id: `smp-${i}`,
  session: "ses_a",
  start: new Date(t0 + i * 10_000),
  end: new Date(t0 + (i + 1) * 10_000),
  gpu_seconds: 10,
  gpu_utilization: 50 + i,
  gpu_memory_mib: 1000 + i,
  ...over,
});

beforeAll(async () => {
  tdb = await createTestDatabase();
  await tdb.db("clusters").insert({ id: "clu_a", name: "a", session_domain: "a.test" });
  const deps: Deps = testDeps({
    db: tdb.db,
    authenticate: fakeAuthenticator({ alice: aPrincipal("usr_alice"), bob: aPrincipal("usr_bob") }),
  });
  const portsOf = (d: Deps): ConnectDeps => ({ db: d.db, clock: d.clock, clusters: dbClusters(d), sessions });
  api = await startTestApi(deps, usageRoutes(portsOf));
  // 100 samples, sent twice (the operator's retry), plus one without utilisation figures.
  const batch = Array.from({ length: 100 }, (_, i) => sample(i));
  await insertUsageSamples(tdb.db, "clu_a", batch);
  await insertUsageSamples(tdb.db, "clu_a", batch);
  await insertUsageSamples(tdb.db, "clu_a", [sample(100, { gpu_utilization: null, gpu_memory_mib: null })]);
});
afterAll(async () => {
  await api?.stop();
  await tdb?.drop();
});

interface Usage {
  latest: { start: string; gpu_seconds: number; gpu_utilization: number | null; gpu_memory_mib: number | null } | null;
  totals: { samples: number; gpu_seconds: number; since: string | null; until: string | null };
  series: Array<{ start: string; gpu_utilization: number | null }>;
}

describe("GET /api/v1/sessions/:id/usage", () => {
  it("answers the latest sample, totals that count a resent batch once, and the series oldest first", async () => {
    const r = await api.call("/api/v1/sessions/ses_a/usage?points=5", { token: "alice" });
    expect(r.status).toBe(200);
    const u = (await r.json()) as Usage;
    expect(u.latest).toEqual({
      start: new Date(t0 + 100 * 10_000).toISOString(),
      end: new Date(t0 + 101 * 10_000).toISOString(),
      gpu_seconds: 10,
      gpu_utilization: null,
      gpu_memory_mib: null,
    });
    expect(u.totals).toEqual({
      samples: 101,
      gpu_seconds: 1010,
      since: new Date(t0).toISOString(),
      until: new Date(t0 + 101 * 10_000).toISOString(),
    });
    expect(u.series.map((p) => p.gpu_utilization)).toEqual([146, 147, 148, 149, null]);
  });

  it("answers an empty picture before the first sample", async () => {
    const u = (await (await api.call("/api/v1/sessions/ses_quiet/usage", { token: "alice" })).json()) as Usage;
    expect(u).toMatchObject({
      latest: null,
      totals: { samples: 0, gpu_seconds: 0, since: null, until: null },
      series: [],
    });
  });

  it("is 404 for another user's session and 400 for a silly series length", async () => {
    expect((await api.call("/api/v1/sessions/ses_a/usage", { token: "bob" })).status).toBe(404);
    expect((await api.call("/api/v1/sessions/ses_a/usage?points=100000", { token: "alice" })).status).toBe(400);
  });
});
