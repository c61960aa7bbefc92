// Figures: the session gateway's overhead. Requests/s and latency through the gateway to the stand-in
// application, next to the stand-in directly, in the same run (issue target: gateway ≥ 0.5 of direct,
// p99 overhead ≤ 5 ms); then WebSockets held open through the gateway at once, with an echo round trip
// on every one of them and the gateway's memory.
//
//   node bench/src/gateway-throughput.ts [--duration 10] [--connections 8,32] [--rounds 2] [--ws 1000]
//                                        [--workers 1,<CPUs>] [--bare undici] [--tls]
//                                        [--upstream standin|jupyter] [--jupyter <command>] [--path hello]
//
// The upstream. `standin` (default): operator/src/standin, a Node server whose default answer (`hello`, 5
// bytes) costs it ~45 µs of CPU: the worst case for a proxy's relative overhead, and far cheaper than what
// a session serves. `jupyter`: a real Jupyter Server (`--jupyter`, default `jupyter` on PATH; e.g. a venv
// with `pip install jupyter-server`), under base URL /proxy/s-bench/ with no token, over a few notebooks;
// `--path` then picks a real endpoint (default `api/status`; `api/contents`, `api/kernelspecs`,
// `static/favicons/favicon.ico`). Measured on the bench machine it costs 0.7–6 ms of CPU per request,
// 15–130 times the stand-in's `hello` (docs/dev/connect.md). WebSockets are held through the stand-in only.
//
// Each connection count is its own set of rounds; within a round every target runs once, one after the
// other: the stand-in directly, the gateway with each --workers count (its own process tree, the real
// entry operator/src/gateway/main.ts), and the bare proxies (gateway-bare-proxy.ts: `undici` is the
// gateway's own client with nothing else, so gateway/bare is the gateway's own cost; `http` is node:http's
// client, the gateway's before).
//
// Read the figures with the machine in mind: the load generator (autocannon, in this process), the
// stand-in and the gateway share the same CPUs, so on a small machine "direct" is limited by autocannon and
// the stand-in, and the gateway's throughput by all three. CPU per request (from /proc, per process) does
// not depend on that; it is printed next to req/s, with the CPU that other processes on the machine used
// during the timed runs (a busy machine lowers every figure, and not equally).
//
// The cookie is signed with the gateway's configured key, as a redemption would have made it: the figure
// is the per-request path (cookie check + proxy), not the one-off token redemption.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { freePort } from "@berth/api";
import { procStat, rssBytes } from "@berth/e2e";
import { signCookie } from "@berth/operator/gateway";
import WebSocket from "ws";
import { upperPercentile } from "./kit/percentile.ts";

interface CannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p90: number; p99: number; max: number; average: number };
  non2xx: number;
  errors: number;
}
type Cannon = (opts: {
  url: string;
  connections: number;
  duration: number;
  headers?: Record<string, string>;
  pipelining?: number;
}) => Promise<CannonResult>;
const autocannon = createRequire(import.meta.url)("autocannon") as Cannon;

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "8,32" },
    ws: { type: "string", default: "1000" },
    tls: { type: "boolean", default: false },
    rounds: { type: "string", default: "2" },
    workers: { type: "string", default: [...new Set([1, availableParallelism()])].join(",") },
    bare: { type: "string", default: "undici" },
    upstream: { type: "string", default: "standin" },
    jupyter: { type: "string", default: "jupyter" },
    path: { type: "string" },
  },
});
if (values.upstream !== "standin" && values.upstream !== "jupyter") throw new Error("--upstream: standin or jupyter");
const jupyterUpstream = values.upstream === "jupyter";
const path = (values.path ?? (jupyterUpstream ? "api/status" : "hello")).replace(/^\//, "");
const duration = Number(values.duration);
const connectionCounts = values.connections.split(",").map(Number);
const wsCount = jupyterUpstream ? 0 : Number(values.ws);
const rounds = Number(values.rounds);
const workerCounts = values.workers.split(",").map(Number);
const bareClients = values.bare.split(",").filter((c) => c && c !== "none");
const root = join(import.meta.dirname, "..", "..");
const dir = mkdtempSync(join(tmpdir(), "berth-bench-gw-"));
const children: ChildProcess[] = [];

/** Spawns a node script and resolves with the first stdout line `pick` recognises. */
function start<T>(
  script: string,
  args: string[],
  env: Record<string, string>,
  pick: (line: string) => T | undefined,
): Promise<{ child: ChildProcess; value: T }> {
  const child = spawn(process.execPath, [join(root, script), ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    rl.on("line", (line) => {
      const v = pick(line);
      if (v !== undefined) resolve({ child, value: v });
    });
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

/** A real Jupyter Server as the session's application: base URL /proxy/s-bench/, no token, a few notebooks. */
async function startJupyter(): Promise<{ child: ChildProcess; url: string }> {
  const rootDir = join(dir, "notebooks");
  mkdirSync(rootDir);
  for (let i = 0; i < 8; i++)
    writeFileSync(join(rootDir, `notebook-${i}.ipynb`), '{"cells":[],"metadata":{},"nbformat":4,"nbformat_minor":5}\n');
  const port = await freePort();
  const child = spawn(
    values.jupyter,
    [
      "server",
      "--allow-root",
      "--no-browser",
      `--ServerApp.root_dir=${rootDir}`,
      "--ServerApp.base_url=/proxy/s-bench/",
      "--IdentityProvider.token=",
      "--ServerApp.ip=127.0.0.1",
      `--ServerApp.port=${port}`,
      "--ServerApp.port_retries=0",
      "--ServerApp.log_level=WARN",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  children.push(child);
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`jupyter exited with ${child.exitCode}: ${stderr}`);
    const ok = await fetch(`${url}/proxy/s-bench/api/status`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { child, url };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`jupyter did not answer within 30 s: ${stderr}`);
}

function rssMiB(pids: number[]): number {
  return pids.reduce((bytes, pid) => bytes + rssBytes(pid), 0) / 2 ** 20;
}

/** CPU seconds (user + system) processes have used so far. One that is gone fails the run: its CPU would be lost. */
function cpuSeconds(pids: number[]): number {
  let s = 0;
  for (const pid of pids) {
    const p = procStat(pid);
    if (!p) throw new Error(`process ${pid} has exited: its CPU time can no longer be read`);
    s += p.cpuS;
  }
  return s;
}

/** CPU seconds the whole machine spent busy so far (all CPUs, /proc/stat). */
function machineBusySeconds(): number {
  const f = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = f;
  return (user + nice + system + irq + softirq + steal) / 100;
}

const selfCpuSeconds = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

const fmt = (r: CannonResult) =>
  `${r.requests.average.toFixed(0).padStart(7)} req/s  p50 ${String(r.latency.p50).padStart(3)} ms  p99 ${String(r.latency.p99).padStart(3)} ms  avg ${r.latency.average.toFixed(2)} ms  non-2xx/err ${r.non2xx + r.errors}`;

interface Target {
  name: string;
  url: string;
  headers?: Record<string, string>;
  /** The processes that serve it (the stand-in counts separately). */
  pids: number[];
  gateway?: { workers: number; wsUrl: string; origin: string };
}

try {
  const standin = jupyterUpstream
    ? await startJupyter().then((j) => ({ child: j.child, value: j.url }))
    : await start("operator/src/standin/main.ts", ["0"], {}, (l) => /listening on (\S+)/.exec(l)?.[1]);
  const standinPid = standin.child.pid as number;
  const upstreamName = jupyterUpstream ? "jupyter" : "stand-in";
  const key = randomBytes(32);
  const keyFile = join(dir, "cookie-key");
  writeFileSync(keyFile, key.toString("hex"));
  writeFileSync(join(dir, "token"), "unused: no redemption in this benchmark\n");
  const now = Math.floor(Date.now() / 1000);
  const cookie = `berth_cnx=${signCookie({ s: "ses_bench", c: "s-bench", u: "usr_bench", k: "clu_bench", i: now, e: now + 3600 }, key)}`;

  const targets: Target[] = [{ name: "direct", url: `${standin.value}/proxy/s-bench/${path}`, pids: [standinPid] }];
  for (const workers of workerCounts) {
    const gw = await start(
      "operator/src/gateway/main.ts",
      [],
      {
        BERTH_GATEWAY_CLUSTER_ID: "clu_bench",
        BERTH_GATEWAY_CONTROL_PLANE_URL: "http://127.0.0.1:9",
        BERTH_GATEWAY_TOKEN_FILE: join(dir, "token"),
        BERTH_GATEWAY_HOST: "127.0.0.1",
        BERTH_GATEWAY_PORT: "0",
        BERTH_GATEWAY_COOKIE_KEY_FILE: keyFile,
        BERTH_GATEWAY_COOKIE_TTL_SECONDS: "3600",
        BERTH_GATEWAY_STATIC_UPSTREAMS: `*=${standin.value.replace("http://", "")}`,
        BERTH_GATEWAY_WORKERS: String(workers),
        BERTH_GATEWAY_LOG_LEVEL: "info",
        ...(values.tls ? { BERTH_GATEWAY_TLS_SELF_SIGNED_NAMES: "127.0.0.1" } : {}),
      },
      (l) =>
        l.includes("session gateway listening") ? (JSON.parse(l) as { url: string; pids?: number[] }) : undefined,
    );
    const url = gw.value.url;
    targets.push({
      name: `gateway ×${workers}`,
      url: `${url}/proxy/s-bench/${path}`,
      headers: { cookie },
      // The primary (idle with workers) and its workers.
      pids: [gw.child.pid as number, ...(gw.value.pids ?? []).filter((p) => p !== gw.child.pid)],
      gateway: { workers, wsUrl: `${url.replace(/^http/, "ws")}/proxy/s-bench/ws/echo`, origin: url },
    });
  }
  for (const client of bareClients) {
    const bare = await start(
      "bench/src/gateway-bare-proxy.ts",
      [standin.value.replace("http://", ""), client],
      {},
      (l) => /listening on (\S+)/.exec(l)?.[1],
    );
    targets.push({
      name: `bare ${client}`,
      url: `${bare.value}/proxy/s-bench/${path}`,
      pids: [bare.child.pid as number],
    });
  }
  for (const t of targets.filter((t) => t.gateway)) {
    const check = await autocannon({ url: t.url, connections: 1, duration: 1, headers: { cookie } });
    if (check.non2xx > 0 || check.requests.total === 0)
      throw new Error(`${t.name} does not let the benchmark's cookie through`);
  }

  const answer = await fetch(targets[0]?.url as string);
  const answerBytes = (await answer.arrayBuffer()).byteLength;
  if (!answer.ok) throw new Error(`the ${upstreamName} answered ${answer.status} to ${targets[0]?.url}`);
  process.stdout.write(
    `${cpus().length} CPUs (${cpus()[0]?.model ?? "?"}); autocannon (this process), the ${upstreamName} and the target share them\n` +
      `gateway ${values.tls ? "TLS (self-signed P-256)" : "plain HTTP"}; targets: ${targets.map((t) => t.name).join(", ")}\n`,
  );
  const width = Math.max(...targets.map((t) => t.name.length));
  for (const connections of connectionCounts) {
    process.stdout.write(
      `\ngateway overhead: GET /proxy/s-bench/${path} from the ${upstreamName} (${answerBytes}-byte answer), ${connections} connections, ${duration} s per run, ${rounds} rounds\n` +
        `load average before: ${loadavg()
          .map((l) => l.toFixed(1))
          .join(" ")}\n\n`,
    );
    for (const t of targets)
      await autocannon({ url: t.url, connections, duration: 2, ...(t.headers ? { headers: t.headers } : {}) });
    const results = new Map<string, CannonResult[]>(targets.map((t) => [t.name, []]));
    const cpu = new Map<string, { target: number; standin: number; loader: number; requests: number }>(
      targets.map((t) => [t.name, { target: 0, standin: 0, loader: 0, requests: 0 }]),
    );
    let othersCpu = 0;
    let timed = 0;
    for (let i = 0; i < rounds; i++) {
      for (const [j, t] of targets.entries()) {
        const ours = [...new Set([standinPid, ...t.pids])];
        const [t0, s0, m0, o0, a0] = [
          cpuSeconds(t.pids),
          cpuSeconds([standinPid]),
          machineBusySeconds(),
          cpuSeconds(ours),
          selfCpuSeconds(),
        ];
        const r = await autocannon({ url: t.url, connections, duration, ...(t.headers ? { headers: t.headers } : {}) });
        const c = cpu.get(t.name) as { target: number; standin: number; loader: number; requests: number };
        c.loader += selfCpuSeconds() - a0;
        c.target += cpuSeconds(t.pids) - t0;
        c.standin += cpuSeconds([standinPid]) - s0;
        c.requests += r.requests.total;
        othersCpu += machineBusySeconds() - m0 - (cpuSeconds(ours) - o0) - (selfCpuSeconds() - a0);
        timed += duration;
        results.get(t.name)?.push(r);
        process.stdout.write(`${j === 0 ? `round ${i + 1}` : "       "}  ${t.name.padEnd(width)} ${fmt(r)}\n`);
      }
    }
    const avg = (name: string, f: (r: CannonResult) => number): number => {
      const xs = results.get(name) ?? [];
      return xs.reduce((s, r) => s + f(r), 0) / xs.length;
    };
    const rate = (name: string) => avg(name, (r) => r.requests.average);
    const p99 = (name: string) => avg(name, (r) => r.latency.p99);
    const perReq = (name: string, f: (c: { target: number; standin: number; loader: number }) => number): number => {
      const c = cpu.get(name) as { target: number; standin: number; loader: number; requests: number };
      return (f(c) / Math.max(1, c.requests)) * 1e6;
    };
    const µs = (v: number) => `${v.toFixed(0)} µs`;
    process.stdout.write("\nmean\n");
    for (const t of targets) {
      const served =
        t.name === "direct"
          ? `${upstreamName} ${µs(perReq(t.name, (c) => c.target))}`
          : `${µs(perReq(t.name, (c) => c.target))} (+ ${upstreamName} ${µs(perReq(t.name, (c) => c.standin))})`;
      process.stdout.write(
        `  ${t.name.padEnd(width)} ${rate(t.name).toFixed(0).padStart(7)} req/s  p50 ${avg(t.name, (r) => r.latency.p50).toFixed(1)} ms  p99 ${p99(t.name).toFixed(1)} ms` +
          `  CPU/request: ${served}, autocannon ${µs(perReq(t.name, (c) => c.loader))}\n`,
      );
    }
    // All CPU per request on the machine's side of the benchmark (load generator + stand-in + target):
    // when they together are what limits throughput (a busy machine), the ratio of throughputs tends to the
    // inverse ratio of these sums, whatever else runs. An estimate, printed as such.
    const total = (name: string) =>
      perReq(name, (c) => c.loader + (name === "direct" ? c.target : c.target + c.standin));
    const slowest = (name: string, workers: number): number =>
      name === "direct"
        ? Math.max(
            perReq(name, (c) => c.loader),
            perReq(name, (c) => c.target),
          )
        : Math.max(
            perReq(name, (c) => c.loader),
            perReq(name, (c) => c.standin),
            perReq(name, (c) => c.target) / workers,
          );
    for (const t of targets.filter((t) => t.gateway)) {
      const bare = targets.find((b) => b.name.startsWith("bare undici"));
      process.stdout.write(
        `ratio     ${t.name}: gateway/direct throughput ${(rate(t.name) / rate("direct")).toFixed(2)} (target ≥ 0.5)   p99 overhead ${(p99(t.name) - p99("direct")).toFixed(1)} ms (target ≤ 5 ms)${bare ? `   gateway/bare ${(rate(t.name) / rate(bare.name)).toFixed(2)}` : ""}\n` +
          `          CPU-bound estimate: direct ${µs(total("direct"))} / through ${t.name} ${µs(total(t.name))} of CPU per request, all processes = ${(total("direct") / total(t.name)).toFixed(2)}\n` +
          // Where every process has a CPU of its own (load generator, upstream, gateway per worker), each
          // path runs at the pace of its busiest process: an estimate of the ratio off this shared machine.
          `          each process on CPUs of its own: direct paced by ${µs(slowest("direct", 1))}, through ${t.name} by ${µs(slowest(t.name, t.gateway?.workers ?? 1))} of CPU per request = ${(slowest("direct", 1) / slowest(t.name, t.gateway?.workers ?? 1)).toFixed(2)}\n`,
      );
    }
    process.stdout.write(
      `machine   other processes used ${(othersCpu / timed).toFixed(2)} of ${cpus().length} CPUs on average during the timed runs; load average after: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}\n`,
    );
  }

  // WebSockets held at once through each gateway.
  if (wsCount > 0) {
    for (const t of targets.filter((t) => t.gateway)) {
      const g = t.gateway as NonNullable<Target["gateway"]>;
      const rssBefore = rssMiB(t.pids);
      const opened: WebSocket[] = [];
      const t0 = performance.now();
      const batch = 100;
      for (let i = 0; i < wsCount; i += batch) {
        const n = Math.min(batch, wsCount - i);
        opened.push(
          ...(await Promise.all(
            Array.from(
              { length: n },
              () =>
                new Promise<WebSocket>((resolve, reject) => {
                  const ws = new WebSocket(g.wsUrl, {
                    headers: { cookie, origin: g.origin },
                    rejectUnauthorized: false,
                    perMessageDeflate: false,
                  });
                  ws.once("open", () => resolve(ws));
                  ws.once("error", reject);
                  ws.once("unexpected-response", (_q, res) => reject(new Error(`upgrade answered ${res.statusCode}`)));
                }),
            ),
          )),
        );
      }
      const openMs = performance.now() - t0;
      const echo = async (): Promise<number[]> =>
        Promise.all(
          opened.map(
            (ws) =>
              new Promise<number>((resolve) => {
                const s = performance.now();
                ws.once("message", () => resolve(performance.now() - s));
                ws.send("ping");
              }),
          ),
        );
      const first = (await echo()).sort((a, b) => a - b);
      await new Promise((r) => setTimeout(r, 5000));
      const alive = opened.filter((w) => w.readyState === WebSocket.OPEN).length;
      const second = (await echo()).sort((a, b) => a - b);
      const rssHeld = rssMiB(t.pids);
      process.stdout.write(
        `\nWebSockets through ${t.name}: ${wsCount} opened in ${(openMs / 1000).toFixed(2)} s (batches of ${batch}), ${alive} still open after 5 s\n` +
          `echo on all at once: p50 ${upperPercentile(first, 50).toFixed(1)} ms  p99 ${upperPercentile(first, 99).toFixed(1)} ms; after holding 5 s: p50 ${upperPercentile(second, 50).toFixed(1)} ms  p99 ${upperPercentile(second, 99).toFixed(1)} ms\n` +
          `gateway RSS (all its processes) ${rssBefore.toFixed(0)} MiB before, ${rssHeld.toFixed(0)} MiB holding ${alive} (${(((rssHeld - rssBefore) * 1024) / Math.max(1, alive)).toFixed(1)} KiB each)\n`,
      );
      for (const w of opened) w.terminate();
    }
  }
} finally {
  const running = children.filter((c) => c.exitCode === null && c.signalCode === null);
  const exited = running.map((c) => new Promise((r) => c.once("exit", r)));
  for (const c of running) c.kill("SIGTERM");
  // Jupyter Server sometimes stays after SIGTERM (seen twice here, for minutes, holding the bench lock).
  const kill = setTimeout(() => {
    for (const c of running) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  }, 5000);
  await Promise.all(exited);
  clearTimeout(kill);
  rmSync(dir, { recursive: true, force: true });
}
