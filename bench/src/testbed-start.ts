// Warm start of the local 1+2 fleet (e2e/fleet.config.ts), per component, and the fleet's resident
// memory (sum of VmRSS from /proc over all its processes), right after start and once settled.
//
//   node bench/src/testbed-start.ts [--runs=3] [--settle=15]
//
// "Warm" means the binaries are cached; each run starts fresh clusters in a temp folder. Nothing else
// of Berth runs. The machine's other load (parallel test runs) shows up in the figures: note it.
import { readFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { type ComponentTiming, cpuSeconds, findTestbedBinaries, rssBytes, startFleet, table } from "@berth/e2e";
import { fleetConfig } from "@berth/e2e/fleet.config";
import { median } from "./kit/median.ts";

const { values } = parseArgs({
  options: { runs: { type: "string", default: "3" }, settle: { type: "string", default: "15" } },
});
const runs = Math.max(1, Number(values.runs));
const settleS = Math.max(0, Number(values.settle));

const binDir = findTestbedBinaries();
const mb = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MB`;
const secs = (ms: number) => `${(ms / 1000).toFixed(2)}s`;

const spread = (xs: number[], fmt: (n: number) => string) => [Math.min(...xs), median(xs), Math.max(...xs)].map(fmt);

console.log(
  `machine: ${cpus().length} CPUs, ${mb(totalmem())} RAM, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
console.log(`binaries: ${binDir}`);
console.log(
  `fleet: ${fleetConfig.clusters.map((c) => `${c.name} (${c.kind}, ${c.nodes?.length ?? 0} nodes)`).join(", ")}\n`,
);

const starts: number[] = [];
const stops: number[] = [];
const timings: ComponentTiming[][] = [];
const rssAtStart: Map<string, number>[] = [];
const cpuAtStart: Map<string, number>[] = [];
const rssSettled: Map<string, number>[] = [];

// Memory per "cluster/component": the component's process-group leader (none of them forks).
function perProcess(
  fleet: Awaited<ReturnType<typeof startFleet>>,
  measure: (pid: number) => number,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const c of fleet.clusters) {
    for (const pid of c.pids()) {
      const comm = /[^/]+$/.exec(readCmd(pid))?.[0] ?? String(pid);
      out.set(`${c.name}/${comm}`, measure(pid));
    }
  }
  return out;
}
const memory = (fleet: Awaited<ReturnType<typeof startFleet>>) => perProcess(fleet, rssBytes);

function readCmd(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

for (let i = 1; i <= runs; i++) {
  const fleet = await startFleet(fleetConfig, { binDir });
  starts.push(fleet.startMs);
  timings.push([...fleet.timings]);
  rssAtStart.push(memory(fleet));
  // CPU taken at "ready" is the start's cost: unlike wall time, it does not depend on the machine's other load.
  cpuAtStart.push(perProcess(fleet, cpuSeconds));
  await new Promise((r) => setTimeout(r, settleS * 1000));
  rssSettled.push(memory(fleet));
  const t = performance.now();
  await fleet.stop();
  stops.push(performance.now() - t);
  console.log(`run ${i}: fleet ready in ${secs(fleet.startMs)}, stopped in ${secs(stops.at(-1) ?? 0)}`);
}

// Per component: median over runs of "ready after spawn", and of when it was spawned.
const keys = [...new Set(timings.flat().map((t) => `${t.cluster}\t${t.component}`))];
const rows = keys.map((k) => {
  const [cluster = "", component = ""] = k.split("\t");
  const mine = timings.flat().filter((t) => t.cluster === cluster && t.component === component);
  return {
    cluster,
    component,
    at: median(mine.map((t) => t.startedAtMs)),
    took: median(mine.map((t) => t.durationMs)),
    max: Math.max(...mine.map((t) => t.durationMs)),
  };
});
rows.sort((a, b) => a.at - b.at || a.took - b.took);
console.log(`\nwarm start, ${runs} run(s), medians:`);
console.log(
  table(
    ["cluster", "component", "spawned at", "ready after", "max"],
    rows.map((r) => [r.cluster, r.component, `+${secs(r.at)}`, secs(r.took), secs(r.max)]),
  ),
);

const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
const last = rssSettled.at(-1) ?? new Map<string, number>();
const byCluster = new Map<string, number>();
for (const [k, v] of last) byCluster.set(k.split("/")[0] ?? k, (byCluster.get(k.split("/")[0] ?? k) ?? 0) + v);
console.log(
  `\nper process: CPU used until the fleet was ready (median of runs), resident memory after ${settleS}s (last run)`,
);
console.log(
  table(
    ["process", "cpu to ready", "rss"],
    [...last].map(([k, v]) => [k, `${median(cpuAtStart.map((m) => m.get(k) ?? 0)).toFixed(2)}s`, mb(v)]),
  ),
);
console.log(`\nper cluster: ${[...byCluster].map(([k, v]) => `${k} ${mb(v)}`).join(", ")}`);

console.log("\nsummary");
console.log(
  table(
    ["figure", "min", "median", "max"],
    [
      ["fleet start (1+2, warm)", ...spread(starts, secs)],
      ["fleet stop", ...spread(stops, secs)],
      ["fleet CPU used to start", ...spread(cpuAtStart.map(total), (n) => `${n.toFixed(1)}s`)],
      ["fleet RSS right after start", ...spread(rssAtStart.map(total), mb)],
      [`fleet RSS after ${settleS}s`, ...spread(rssSettled.map(total), mb)],
    ],
  ),
);
