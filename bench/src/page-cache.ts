// Figure: what pageQuery's statement-shape cache (db/page.ts) is worth on a paged list through the whole
// API. Two API servers, the same in all but that: "cached" (as shipped) and "uncached" (bench/src/
// page-uncached.ts: every request builds and compiles the list's knex query, as selectPage does), each in
// its own process, measured in alternating order round after round against one embedded Postgres.
//   node bench/src/page-cache.ts [--rounds 8] [--duration 6] [--connections 50] [--path /api/v1/users?...] [--control]
// --control adds a third side, "control": the cached API started like the uncached one (the hook
// registered, inert), so the control/cached ratio shows what two identical sides differ by on this machine.
// Per round and side: req/s, latency percentiles, the API process's CPU per page (from /proc) and
// Postgres' CPU per page; then each side's median and range over the rounds, and the uncached/cached ratio
// of CPU per page per round (above 1: the cache saves CPU). A gain smaller than the rounds' spread is noise.
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { measureServer, type ServerRun, startUsersBed } from "./api-list-bed.ts";
import { at } from "./at.ts";
import { median } from "./kit/median.ts";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "8" },
    duration: { type: "string", default: "6" },
    connections: { type: "string", default: "50" },
    path: { type: "string", default: "/api/v1/users?page=1&size=20" },
    control: { type: "boolean", default: false },
  },
});
const rounds = Number(values.rounds);
const duration = Number(values.duration);
const connections = Number(values.connections);
const path = values.path;
const UNCACHED = fileURLToPath(new URL("./page-uncached.ts", import.meta.url));

type Side = { name: string; node: string[]; env?: Record<string, string>; runs: ServerRun[] };
const cachedSide: Side = { name: "cached", node: [], runs: [] };
const uncachedSide: Side = { name: "uncached", node: ["--import", UNCACHED], runs: [] };
const controlSide: Side | undefined = values.control
  ? { name: "control", node: ["--import", UNCACHED], env: { BENCH_PAGE_HOOK: "inert" }, runs: [] }
  : undefined;
const sides = controlSide ? [cachedSide, uncachedSide, controlSide] : [cachedSide, uncachedSide];

const bed = await startUsersBed();
try {
  const out = (s: string) => process.stdout.write(`${s}\n`);
  const row = (label: string, r: ServerRun) =>
    out(
      `${label.padEnd(18)} ${r.rps.toFixed(0).padStart(6)} ${[r.latency.p50, r.latency.p90, r.latency.p99, r.latency.max].map((x) => String(x).padStart(6)).join(" ")} ${r.serverUs.toFixed(0).padStart(11)} ${r.pgUs.toFixed(0).padStart(10)} ${r.bad}`,
    );
  out(
    `GET ${path}, ${connections} connections, ${duration} s per side after a 2 s warm-up, ${rounds} rounds in alternating order; ${cpus().length} CPUs, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}\n`,
  );
  out(
    `${"round side".padEnd(18)} ${"req/s".padStart(6)} ${"p50".padStart(6)} ${"p90".padStart(6)} ${"p99".padStart(6)} ${"max ms".padStart(6)} ${"API µs/page".padStart(11)} ${"PG µs/page".padStart(10)} bad`,
  );
  for (let round = 0; round < rounds; round++) {
    // Rotate and alternate the order of the sides, so drift in the machine's load hits them alike.
    const first = round % sides.length;
    const order = [...sides.slice(first), ...sides.slice(0, first)];
    if (round % 2 === 1) order.reverse();
    for (const side of order) {
      const env = { ...bed.env, ...side.env };
      const r = await measureServer(bed, { mode: "api", path, connections, duration, env, nodeArgs: side.node });
      side.runs.push(r);
      row(`${round + 1} ${side.name}`, r);
    }
  }
  const spread = (xs: number[], digits = 0) =>
    `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;
  out("\nmedian (range) over the rounds:");
  for (const s of sides) {
    const rs = s.runs;
    out(
      `${s.name.padEnd(9)} req/s ${spread(rs.map((r) => r.rps))}; p50 ${spread(rs.map((r) => r.latency.p50))} ms, p90 ${spread(rs.map((r) => r.latency.p90))} ms, p99 ${spread(rs.map((r) => r.latency.p99))} ms; API CPU ${spread(rs.map((r) => r.serverUs))} µs/page; Postgres ${spread(rs.map((r) => r.pgUs))} µs/page`,
    );
  }
  const cpuRatio = uncachedSide.runs.map((u, k) => u.serverUs / at(cachedSide.runs, k).serverUs);
  const rpsRatio = cachedSide.runs.map((c, k) => c.rps / at(uncachedSide.runs, k).rps);
  out(
    `\nuncached / cached API CPU per page, per round: ${cpuRatio.map((x) => x.toFixed(3)).join(", ")}; median ${median(cpuRatio).toFixed(3)}`,
  );
  out(
    `cached / uncached req/s, per round: ${rpsRatio.map((x) => x.toFixed(3)).join(", ")}; median ${median(rpsRatio).toFixed(3)}`,
  );
  const above = cpuRatio.filter((x) => x > 1).length;
  out(`uncached cost more API CPU per page than cached in ${above} of ${rounds} rounds`);
  if (controlSide) {
    const aa = controlSide.runs.map((c, k) => c.serverUs / at(cachedSide.runs, k).serverUs);
    out(
      `control / cached API CPU per page (two identical sides), per round: ${aa.map((x) => x.toFixed(3)).join(", ")}; median ${median(aa).toFixed(3)}`,
    );
  }
  const cached = cachedSide.runs.map((r) => r.serverUs);
  const noise = (Math.max(...cached) - Math.min(...cached)) / median(cached);
  out(
    `saving: ${(median(uncachedSide.runs.map((r) => r.serverUs)) - median(cached)).toFixed(0)} µs of API CPU per page (${((median(cpuRatio) - 1) * 100).toFixed(1)} %); the cached side's own round-to-round range: ${(noise * 100).toFixed(1)} %`,
  );
} finally {
  await bed.stop();
}
