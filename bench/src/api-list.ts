// Figure: authenticated GET of a list through the whole API (bearer JWT verify, the principal from the
// per-process cache (api/src/domain/identity/principalCache.ts: one load per user per 5 s), one paged query whose rows carry
// the total (db/page.ts)) at 50 connections, next to a baseline measured in the same run (bare Koa + the
// same JWT verify + one Postgres point read). One caller, so the figure is the caches' warm path. The
// verify is AccessTokens.verify in both, with its cache of verified tokens; a last case checks the
// signature on every request, to show what that cache is worth.
//   node bench/src/api-list.ts [--duration 10] [--connections 50] [--rounds 3] [--profile DIR]
// Each server runs in its own process (autocannon never shares its event loop); besides req/s and
// latency, the server's own CPU time per request is reported (from /proc), which a loaded machine
// disturbs far less than throughput. --profile writes a V8 CPU profile of every server run into DIR.
// Target: API throughput at least half the baseline's, API p99 <= 50 ms.
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { measureServer, startUsersBed } from "./api-list-bed.ts";
import { at } from "./at.ts";
import { upperPercentile } from "./kit/percentile.ts";

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
const profile = values.profile ? ["--cpu-prof", `--cpu-prof-dir=${values.profile}`] : [];

async function measure(name: string, mode: string, path: string, env: Record<string, string>) {
  const r = await measureServer(bed, { mode, path, env, connections, duration, nodeArgs: profile });
  return {
    name,
    rps: r.rps,
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
    cpuUsPerRequest: r.serverUs,
    pgUsPerRequest: r.pgUs,
    bad: r.bad,
  };
}

const bed = await startUsersBed();
try {
  const { env } = bed;
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
    for (const [i, c] of cases.entries()) at(runs, i).push(await measure(c.name, c.mode, c.path, c.env));
  }
  // Of the rounds; the upper middle one for an even count.
  const median = (xs: number[]) => upperPercentile(xs, 50);
  const results = runs.map((rs) => ({
    name: at(rs, 0).name,
    rps: median(rs.map((r) => r.rps)),
    p50: median(rs.map((r) => r.p50)),
    p99: median(rs.map((r) => r.p99)),
    max: Math.max(...rs.map((r) => r.max)),
    cpu: median(rs.map((r) => r.cpuUsPerRequest)),
    pgCpu: median(rs.map((r) => r.pgUsPerRequest)),
    bad: rs.reduce((n, r) => n + r.bad, 0),
  }));
  const ratios = at(runs, 1).map((r, i) => r.rps / at(at(runs, 0), i).rps);
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
  const api = at(results, 1);
  process.stdout.write(
    `\nAPI / baseline throughput per round: ${ratios.map((x) => x.toFixed(2)).join(", ")}; median ${ratio.toFixed(2)} (target >= 0.50): ${ratio >= 0.5 ? "met" : "NOT met"}\n`,
  );
  const full = at(runs, 3).map((r, i) => at(at(runs, 1), i).rps / r.rps);
  process.stdout.write(
    `API / baseline checking the signature every time (no cache of verified tokens): median ${median(full).toFixed(2)}\n`,
  );
  process.stdout.write(`API p99: ${api.p99} ms (target <= 50 ms): ${api.p99 <= 50 ? "met" : "NOT met"}\n`);
} finally {
  await bed.stop();
}
