// Figure: authenticated GET of a list through the whole API (bearer JWT verify, the principal from the
// per-process cache (auth/principalCache.ts: one load per user per 5 s), one paged query whose rows carry
// the total (db/page.ts)) at 50 connections, next to a baseline measured in the same run (bare Koa + the
// same JWT verify + one Postgres point read). One caller, so the figure is the caches' warm path. The
// verify is AccessTokens.verify in both, with its cache of verified tokens; a last case checks the
// signature on every request, to show what that cache is worth.
//   node bench/src/api-list.ts [--duration 10] [--connections 50] [--rounds 3] [--profile DIR]
// Each server runs in its own process (autocannon never shares its event loop); besides req/s and
// latency, the server's own CPU time per request is reported (from /proc), which a loaded machine
// disturbs far less than throughput. --profile writes a V8 CPU profile of every server run into DIR.
// Target: API throughput at least half the baseline's, API p99 <= 50 ms.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { AccessTokens } from "../../api/src/auth/tokens.ts";
import { connect, migrateLatest } from "../../api/src/db/knex.ts";
import { startPostgres } from "../../api/src/db/server.ts";
import { cpuSeconds, cpuSecondsWithChildren } from "../../e2e/src/testbed/procfs.ts";

interface CannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Cannon = (opts: {
  url: string;
  connections: number;
  duration: number;
  headers: Record<string, string>;
}) => Promise<CannonResult>;
const autocannon = createRequire(import.meta.url)("autocannon") as Cannon;

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "50" },
    rounds: { type: "string", default: "3" },
    profile: { type: "string" },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const rounds = Number(values.rounds);
const SECRET = "bench-secret-bench-secret-bench-secret";
const SERVER = fileURLToPath(new URL("./api-list-server.ts", import.meta.url));

async function startServer(mode: string, env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const profile = values.profile ? ["--cpu-prof", `--cpu-prof-dir=${values.profile}`] : [];
  const child = spawn(process.execPath, [...profile, SERVER, mode], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (b: Buffer) => {
      out += b.toString();
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) resolve(line.trim());
    });
    child.once("exit", (code) => reject(new Error(`${mode} server exited with ${code}`)));
  });
  return { url, child };
}

async function stopServer(child: ChildProcess): Promise<void> {
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

async function measure(name: string, mode: string, path: string, env: Record<string, string>, token: string) {
  const { url, child } = await startServer(mode, env);
  try {
    const headers = { authorization: `Bearer ${token}` };
    const probe = await fetch(url + path, { headers });
    if (probe.status !== 200) throw new Error(`${name}: ${path} answered ${probe.status}: ${await probe.text()}`);
    await autocannon({ url: url + path, connections, duration: 2, headers }); // warm-up (JIT, pool)
    const cpuBefore = cpuSeconds(child.pid!);
    // Postgres (the postmaster and its backends) shares the machine: a query that costs it more is part of a request's cost.
    const pgBefore = cpuSecondsWithChildren(pg.pid);
    const r = await autocannon({ url: url + path, connections, duration, headers });
    const cpu = cpuSeconds(child.pid!) - cpuBefore;
    const pgCpu = cpuSecondsWithChildren(pg.pid) - pgBefore;
    return {
      name,
      rps: r.requests.average,
      p50: r.latency.p50,
      p99: r.latency.p99,
      max: r.latency.max,
      total: r.requests.total,
      cpuUsPerRequest: (cpu * 1e6) / Math.max(1, r.requests.total),
      pgUsPerRequest: (pgCpu * 1e6) / Math.max(1, r.requests.total),
      bad: r.non2xx + r.errors + r.timeouts,
    };
  } finally {
    await stopServer(child);
  }
}

const dir = mkdtempSync(join(tmpdir(), "berth-bench-"));
const pg = await startPostgres({ dataDir: join(dir, "data") });
try {
  const db = connect(pg.url, { poolMax: 2 });
  await migrateLatest(db);
  const adminId = `usr_${randomUUID().replaceAll("-", "").slice(0, 20)}`;
  await db("users").insert({
    id: adminId,
    email: "bench-admin@berth.local",
    password_hash: "unused",
    must_change_password: false,
    is_super_admin: true,
  });
  await db("users").insert(
    Array.from({ length: 200 }, (_, i) => ({
      id: `usr_bench${i}`,
      email: `user${i}@bench.local`,
      password_hash: "unused",
    })),
  );
  // Planner statistics, as autovacuum would have them on a live database (it may not have run yet here).
  await db.raw("ANALYZE users");
  await db.destroy();

  const token = (
    await new AccessTokens({ secret: SECRET, ttlSeconds: 3600 }).issue({ userId: adminId, tokenVersion: 0 })
  ).token;
  const env = { DATABASE_URL: pg.url, BERTH_JWT_SECRET: SECRET, BERTH_ACCESS_TOKEN_TTL_SECONDS: "3600" };
  const cases = [
    { name: "baseline: Koa + JWT verify + 1 point read", mode: "baseline", path: "/", env },
    { name: "API: GET /api/v1/users?page=1&size=20", mode: "api", path: "/api/v1/users?page=1&size=20", env },
    {
      name: "API, response check off",
      mode: "api",
      path: "/api/v1/users?page=1&size=20",
      env: { ...env, BERTH_VALIDATE_RESPONSES: "false" },
    },
    { name: "baseline, signature checked every time", mode: "baseline-full", path: "/", env },
  ];
  // Rounds alternate the cases so drift in the machine's load hits them alike; each figure is the median.
  const runs: Awaited<ReturnType<typeof measure>>[][] = cases.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [i, c] of cases.entries()) runs[i]!.push(await measure(c.name, c.mode, c.path, c.env, token));
  }
  const median = (xs: number[]) => xs.toSorted((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const results = runs.map((rs) => ({
    name: rs[0]!.name,
    rps: median(rs.map((r) => r.rps)),
    p50: median(rs.map((r) => r.p50)),
    p99: median(rs.map((r) => r.p99)),
    max: Math.max(...rs.map((r) => r.max)),
    cpu: median(rs.map((r) => r.cpuUsPerRequest)),
    pgCpu: median(rs.map((r) => r.pgUsPerRequest)),
    bad: rs.reduce((n, r) => n + r.bad, 0),
  }));
  const ratios = runs[1]!.map((r, i) => r.rps / runs[0]![i]!.rps);
  const pad = (s: string, n: number) => s.padEnd(n);
  process.stdout.write(
    `\n${connections} connections, ${duration} s per case after a 2 s warm-up, ${rounds} alternating rounds (medians); ${cpus().length} CPUs, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}\n\n`,
  );
  process.stdout.write(
    `${pad("case", 44)} ${pad("req/s", 9)} ${pad("p50 ms", 7)} ${pad("p99 ms", 7)} ${pad("max ms", 7)} ${pad("CPU µs/req: server", 19)} ${pad("Postgres", 9)} non-2xx/err\n`,
  );
  for (const r of results) {
    process.stdout.write(
      `${pad(r.name, 44)} ${pad(r.rps.toFixed(0), 9)} ${pad(String(r.p50), 7)} ${pad(String(r.p99), 7)} ${pad(String(r.max), 7)} ${pad(r.cpu.toFixed(0), 19)} ${pad(r.pgCpu.toFixed(0), 9)} ${r.bad}\n`,
    );
  }
  const ratio = median(ratios);
  const api = results[1]!;
  process.stdout.write(
    `\nAPI / baseline throughput per round: ${ratios.map((x) => x.toFixed(2)).join(", ")}; median ${ratio.toFixed(2)} (target >= 0.50): ${ratio >= 0.5 ? "met" : "NOT met"}\n`,
  );
  const full = runs[3]!.map((r, i) => runs[1]![i]!.rps / r.rps);
  process.stdout.write(
    `API / baseline checking the signature every time (no cache of verified tokens): median ${median(full).toFixed(2)}\n`,
  );
  process.stdout.write(`API p99: ${api.p99} ms (target <= 50 ms): ${api.p99 <= 50 ? "met" : "NOT met"}\n`);
} finally {
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
