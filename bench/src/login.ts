// Figure: sign-in latency through the whole API (POST /api/v1/auth/login: throttle bookkeeping, user
// lookup, argon2id verification, token signing), sequential and concurrent, with the argon2id parameters
// it ran with; and the equal-time check: a wrong password and an unknown email, interleaved.
//   node bench/src/login.ts [--n 200] [--concurrency 8]
// argon2id dominates; the throttle is kept out of the way by a clock that jumps past its window before
// every failing attempt (the bench measures cost, not the lock-out).

import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Deps } from "@berth/api";
import { buildDeps, connect, migrateLatest, startPostgres } from "@berth/api";
import {
  buildApp,
  createMetrics,
  DEFAULT_ARGON2,
  describeParams,
  PasswordHasher,
  testConfig,
} from "@berth/api/testing";
import pino from "pino";
import { percentile } from "./kit/percentile.ts";

const { values } = parseArgs({
  options: { n: { type: "string", default: "200" }, concurrency: { type: "string", default: "8" } },
});
const N = Number(values.n);
const CONCURRENCY = Number(values.concurrency);

const ms = (x: number) => x.toFixed(1).padStart(7);

const dir = mkdtempSync(join(tmpdir(), "berth-bench-login-"));
const pg = await startPostgres({ dataDir: join(dir, "data") });
const db = connect(pg.url, { poolMax: 20 });
try {
  await migrateLatest(db);
  const hasher = new PasswordHasher(DEFAULT_ARGON2);
  const password = "correct horse battery staple";
  await db("users").insert({
    id: "usr_benchlogin",
    email: "bench@berth.local",
    password_hash: await hasher.hash(password),
  });
  // Concurrent sign-ins are of different people: more than 5 simultaneous sign-ins of one account from
  // one address are refused by design (see api/src/domain/identity/throttle.ts).
  await db("users").insert(
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, i) => ({
        id: `usr_benchlogin${i}`,
        email: `bench${i}@berth.local`,
        password_hash: await hasher.hash(password),
      })),
    ),
  );

  // Real time plus an offset the bench moves forward to step out of the throttle's window.
  let offsetMs = 0;
  const clock = { now: () => new Date(Date.now() + offsetMs) };
  const config = testConfig({ DATABASE_URL: pg.url, BERTH_ACCESS_TOKEN_TTL_SECONDS: "900" });
  const deps: Deps = buildDeps(config, {
    db,
    clock,
    log: pino({ level: "silent" }),
    metrics: createMetrics({ defaultMetrics: false }),
  });
  const server = createServer(buildApp(deps).callback());
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/auth/login`;

  const login = async (email: string, pw: string, expect: number): Promise<number> => {
    const t0 = performance.now();
    const res = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ email, password: pw }),
    });
    await res.arrayBuffer();
    const dt = performance.now() - t0;
    if (res.status !== expect) throw new Error(`login answered ${res.status}, expected ${expect}`);
    return dt;
  };

  // The hash alone, for reference.
  const hashOnly: number[] = [];
  for (let i = 0; i < 50; i++) {
    const t0 = performance.now();
    await hasher.hash(password);
    hashOnly.push(performance.now() - t0);
  }

  for (let i = 0; i < 10; i++) await login("bench@berth.local", password, 200); // warm-up

  const sequential: number[] = [];
  for (let i = 0; i < N; i++) sequential.push(await login("bench@berth.local", password, 200));

  const concurrent: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, i) => {
      while (next++ < N) concurrent.push(await login(`bench${i}@berth.local`, password, 200));
    }),
  );
  const concurrentRate = (concurrent.length / (performance.now() - t0)) * 1000;

  // Equal time: interleaved wrong-password and unknown-email attempts (both 401 invalid_credentials).
  const wrong: number[] = [];
  const unknown: number[] = [];
  for (let i = 0; i < Math.max(50, N / 2); i++) {
    offsetMs += 16 * 60 * 1000;
    wrong.push(await login("bench@berth.local", "not the password", 401));
    offsetMs += 16 * 60 * 1000;
    unknown.push(await login(`nobody${i}@berth.local`, "not the password", 401));
  }

  server.close();
  const row = (name: string, xs: number[], extra = "") =>
    `| ${name.padEnd(44)} | ${String(xs.length).padStart(5)} | ${ms(percentile(xs, 50))} | ${ms(percentile(xs, 99))} | ${extra.padStart(12)} |`;
  const lines = [
    `Sign-in (POST /api/v1/auth/login) — ${describeParams(DEFAULT_ARGON2)}`,
    `machine: ${cpus()[0]?.model ?? "?"}, ${availableParallelism()} CPUs, Node ${process.version}, UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? "4 (default)"}, load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")} (figures are only as quiet as the machine)`,
    "",
    `| ${"what".padEnd(44)} | ${"n".padStart(5)} | p50 ms  | p99 ms  | ${"throughput".padStart(12)} |`,
    `|${"-".repeat(46)}|${"-".repeat(7)}|---------|---------|${"-".repeat(14)}|`,
    row("argon2id hash alone (in process)", hashOnly),
    row(
      "login, 1 at a time (200 OK)",
      sequential,
      `${(1000 / (sequential.reduce((a, b) => a + b, 0) / sequential.length)).toFixed(1)}/s`,
    ),
    row(`login, ${CONCURRENCY} concurrent users (200 OK)`, concurrent, `${concurrentRate.toFixed(1)}/s`),
    row("wrong password, known email (401)", wrong),
    row("unknown email (401)", unknown),
    "",
    `equal time: p50 unknown − p50 wrong = ${(percentile(unknown, 50) - percentile(wrong, 50)).toFixed(1)} ms (${(((percentile(unknown, 50) - percentile(wrong, 50)) / percentile(wrong, 50)) * 100).toFixed(1)} %)`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  await db.destroy();
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
