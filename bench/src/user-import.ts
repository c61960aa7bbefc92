// Figure: bulk user import of a 10,000-row CSV as the job it is (POST /api/v1/users/imports answers 202 after
// the whole-file checks; the worker's import loop runs the rows: per-row checks, one transaction per 50 rows
// with their records, ledger movements for initial and welcome credits, a notification and a sealed temporary
// password per new account), as a dry run, for real, and again (every row unchanged): the time to accepted
// (the request a proxy sees) and the time to done (the job polled every 250 ms); the results CSV download;
// the passwords fetched once; the process's memory. Side by side with the baseline an administrator has
// without it: POST /api/v1/users one account at a time (admin-chosen password, so one argon2id hash each),
// run over --baseline rows (default 1,000; per-row time extrapolated to the file).
//   node bench/src/user-import.ts [--rows 10000] [--baseline 1000] [--concurrency 4]
// The API and the worker's import loop run in this process, so the memory figures are both together
// (RSS, heap) sampled every 20 ms.

import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Deps } from "@berth/api";
import { buildDeps, connect, migrateLatest, parseSecretKeys, startPostgres, UserImportLoop } from "@berth/api";
import { buildApp, checkLedgerInvariants, createMetrics, grantToOrganization, testConfig } from "@berth/api/testing";
import { ApiClient } from "@berth/console/client";
import pino from "pino";
import { Agent, fetch } from "undici";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "10000" },
    baseline: { type: "string", default: "1000" },
    concurrency: { type: "string", default: "4" },
  },
});
const ROWS = Number(values.rows);
const BASELINE = Number(values.baseline);
const CONCURRENCY = Number(values.concurrency);

const MiB = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MiB`;

/** Peak RSS and heap while `run` runs, above what they were before it. */
async function measured<T>(
  run: () => Promise<T>,
): Promise<{ value: T; ms: number; rssPeak: number; heapPeak: number }> {
  globalThis.gc?.();
  const base = process.memoryUsage();
  let rssPeak = base.rss;
  let heapPeak = base.heapUsed;
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    rssPeak = Math.max(rssPeak, m.rss);
    heapPeak = Math.max(heapPeak, m.heapUsed);
  }, 20);
  const t0 = performance.now();
  try {
    const value = await run();
    return { value, ms: performance.now() - t0, rssPeak: rssPeak - base.rss, heapPeak: heapPeak - base.heapUsed };
  } finally {
    clearInterval(timer);
  }
}

const dir = mkdtempSync(join(tmpdir(), "berth-bench-import-"));
const pg = await startPostgres({ dataDir: join(dir, "data") });
const db = connect(pg.url, { poolMax: 20 });
try {
  await migrateLatest(db);
  const clock = { now: () => new Date() };
  const config = testConfig({ DATABASE_URL: pg.url, BERTH_ACCESS_TOKEN_TTL_SECONDS: "3600" });
  const deps: Deps = buildDeps(config, {
    db,
    clock,
    log: pino({ level: "silent" }),
    metrics: createMetrics({ defaultMetrics: false }),
  });
  await db("users").insert({
    id: "usr_benchimportadmin",
    email: "admin@bench.test",
    password_hash: "x",
    is_super_admin: true,
  });
  await db("organizations").insert({ id: "org_benchimport00000000", name: "Bench", slug: "bench" });
  await db("projects").insert([
    { id: "prj_benchimport00000001", organization_id: "org_benchimport00000000", name: "Vision" },
    { id: "prj_benchimport00000002", organization_id: "org_benchimport00000000", name: "Speech" },
  ]);
  await grantToOrganization(db, {
    organizationId: "org_benchimport00000000",
    amount: 10n ** 15n,
    actorKind: "system",
    actorId: null,
    reason: "bench",
    at: clock.now(),
  });
  await db("organization_welcome_credits").insert({ organization_id: "org_benchimport00000000", amount: "5000000" });
  const token = (await deps.auth.tokens.issue({ userId: "usr_benchimportadmin", tokenVersion: 0 })).token;
  const loop = new UserImportLoop({
    db,
    log: pino({ level: "silent" }),
    secretKeys: parseSecretKeys(config.webhooks.secretKeys.reveal()),
    intervalMs: 250,
  });
  loop.start();
  const server = createServer(buildApp(deps).callback());
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // A whole file is one request: no header deadline (fetch's default, 300 s, is shorter than a large
  // file on a loaded machine).
  const dispatcher = new Agent({ headersTimeout: 0, bodyTimeout: 0 });
  const api = new ApiClient({
    baseUrl: base,
    token: () => token,
    // undici's own fetch with that Agent (the global fetch's types name no dispatcher).
    fetch: ((url: string, init?: object) => fetch(url, { ...init, dispatcher })) as unknown as typeof globalThis.fetch,
  });

  // A realistic file: names, a project for two rows in three, an initial credit for one in four.
  const lines = ["email,name,organization,project,role,initial_credits"];
  for (let i = 0; i < ROWS; i++)
    lines.push(
      `student${i}@university.example.edu,Student Number ${i},bench,${["Vision", "Speech", ""][i % 3]},member,${i % 4 === 0 ? "2.5" : ""}`,
    );
  const csv = lines.join("\r\n");
  /** Starts the job (its time to accepted) and polls it until it has ended. */
  const importOnce = async (text: string, dryRun: boolean) => {
    const t0 = performance.now();
    const job = await api.call("createUserImport", { body: { csv: text, dry_run: dryRun } });
    const acceptedMs = performance.now() - t0;
    for (;;) {
      const now = await api.call("getUserImport", { params: { importId: job.id } });
      if (now.state === "failed") throw new Error(`import ${job.id} failed: ${JSON.stringify(now.failure)}`);
      if (now.state === "succeeded") return { ...now, acceptedMs };
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  await importOnce(lines.slice(0, 21).join("\r\n"), true); // warm-up
  // Each phase's figure goes to stderr as it is known: a long run on a loaded machine shows progress.
  const progress = (what: string, r: { ms: number; rssPeak: number; heapPeak: number }) =>
    process.stderr.write(
      `${what}: ${(r.ms / 1000).toFixed(1)} s, RSS peak +${MiB(r.rssPeak)}, heap peak +${MiB(r.heapPeak)}\n`,
    );
  const dry = await measured(() => importOnce(csv, true));
  progress("dry run", dry);
  const real = await measured(() => importOnce(csv, false));
  progress("import", real);
  const passwords = await measured(() => api.call("takeUserImportPasswords", { params: { importId: real.value.id } }));
  if (passwords.value.temporary_passwords.length !== ROWS) throw new Error("not every temporary password came back");
  const again = await measured(() => importOnce(csv, false));
  progress("again", again);
  // A CSV file, not JSON: read as the response it is.
  const download = await measured(async () => (await api.fetchRaw(real.value.results_url)).text());
  for (const [name, r, want] of [
    ["dry run", dry, "create"],
    ["import", real, "create"],
    ["again", again, "unchanged"],
  ] as const)
    if (r.value.counts[want] !== ROWS) throw new Error(`${name}: ${JSON.stringify(r.value.counts)}`);
  const violations = await checkLedgerInvariants(db);
  if (violations.length > 0) throw new Error(`ledger: ${JSON.stringify(violations.slice(0, 3))}`);

  // Baseline: one POST /users per person, CONCURRENCY at a time.
  let next = 0;
  const baseline = await measured(() =>
    Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < BASELINE) {
          const i = next++;
          await api.call("createUser", {
            body: {
              email: `one-by-one${i}@university.example.edu`,
              password: `temporary-${i}-Xq9!vLm2`,
              display_name: `Student Number ${i}`,
              organization_id: "org_benchimport00000000",
            },
          });
        }
      }),
    ),
  );
  server.close();
  await loop.stop();

  const perRow = (ms: number, n: number) => `${((ms / n) * 1000).toFixed(0)} µs`;
  const row = (what: string, n: number, r: { ms: number; rssPeak: number; heapPeak: number }, extra = "") =>
    `| ${what.padEnd(46)} | ${String(n).padStart(6)} | ${(r.ms / 1000).toFixed(1).padStart(7)} s | ${perRow(r.ms, n).padStart(8)} | ${MiB(r.rssPeak).padStart(8)} | ${MiB(r.heapPeak).padStart(8)} | ${extra}`;
  const accepted = (r: { value: { acceptedMs: number } }) => `accepted in ${r.value.acceptedMs.toFixed(0)} ms`;
  const out = [
    `Bulk user import (POST /api/v1/users/imports, a job run by the worker's loop), ${ROWS} rows, ${(Buffer.byteLength(csv) / 1024).toFixed(0)} KiB`,
    `machine: ${cpus()[0]?.model ?? "?"}, ${availableParallelism()} CPUs, Node ${process.version}, load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")} (figures are only as quiet as the machine)`,
    "",
    `| ${"what".padEnd(46)} |   rows | time to done |  per row | RSS peak | heap peak | time to accepted`,
    `|${"-".repeat(48)}|--------|-----------|----------|----------|-----------|------`,
    row("dry run (played in memory, writes its records)", ROWS, dry, accepted(dry)),
    row("import (one transaction per 50 rows)", ROWS, real, accepted(real)),
    row("temporary passwords fetched once (opened)", ROWS, passwords),
    row("same file again (every row unchanged)", ROWS, again, accepted(again)),
    row("results CSV download", ROWS, download),
    row(
      `baseline: POST /users one by one, ${CONCURRENCY} at a time`,
      BASELINE,
      baseline,
      BASELINE < ROWS ? `→ ${(((baseline.ms / BASELINE) * ROWS) / 1000).toFixed(0)} s for ${ROWS} (extrapolated)` : "",
    ),
    "",
    `import vs baseline, per row: ${(baseline.ms / BASELINE / (real.ms / ROWS)).toFixed(1)}× faster (the baseline pays one argon2id hash per account; the import stores its generated 144-bit temporary passwords as salted SHA-256, see api/src/domain/identity/password.ts)`,
    "ledger invariants after both: hold",
  ];
  process.stdout.write(`${out.join("\n")}\n`);
} finally {
  await db.destroy();
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
