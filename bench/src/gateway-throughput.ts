// Figures: the session gateway's overhead. Requests/s and latency through the gateway to the stand-in
// application, next to the stand-in directly, in the same run (issue target: gateway ≥ 0.5 of direct,
// p99 overhead ≤ 5 ms); then WebSockets held open through the gateway at once, with an echo round trip
// on every one of them and the gateway's memory.
//
//   node bench/src/gateway-throughput.ts [--duration 10] [--connections 8,32] [--ws 1000] [--tls]
//
// Each connection count is its own set of rounds (direct, gateway, bare proxy alternating). Below the
// gateway's CPU limit the ratio is about latency (two hops instead of one); above it, about CPU per
// request (one Node thread per gateway process): both are reported.
//
// The stand-in and the gateway run as their own processes (operator/src/standin/main.ts and the real
// gateway entry operator/src/gateway/main.ts), the load generator (autocannon) in this one. The cookie
// is signed with the gateway's configured key, as a redemption would have made it: the figure is the
// per-request path (cookie check + proxy), not the one-off token redemption.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { signCookie } from "../../operator/src/gateway/cookie.ts";

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
  },
});
const duration = Number(values.duration);
const connectionCounts = values.connections.split(",").map(Number);
const wsCount = Number(values.ws);
const rounds = Number(values.rounds);
const root = join(import.meta.dirname, "..", "..");
const dir = mkdtempSync(join(tmpdir(), "berth-bench-gw-"));
const children: ChildProcess[] = [];

/** Spawns a node script and resolves with the first stdout line `pick` recognises. */
function start(
  script: string,
  args: string[],
  env: Record<string, string>,
  pick: (line: string) => string | undefined,
): Promise<{ child: ChildProcess; value: string }> {
  const child = spawn(process.execPath, [join(root, script), ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    rl.on("line", (line) => {
      const v = pick(line);
      if (v) resolve({ child, value: v });
    });
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

function rssMiB(pid: number | undefined): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number | undefined): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const fmt = (r: CannonResult) =>
  `${r.requests.average.toFixed(0).padStart(7)} req/s  p50 ${String(r.latency.p50).padStart(3)} ms  p99 ${String(r.latency.p99).padStart(3)} ms  avg ${r.latency.average.toFixed(2)} ms  non-2xx/err ${r.non2xx + r.errors}`;

try {
  const standin = await start("operator/src/standin/main.ts", ["0"], {}, (l) => /listening on (\S+)/.exec(l)?.[1]);
  const key = randomBytes(32);
  const keyFile = join(dir, "cookie-key");
  writeFileSync(keyFile, key.toString("hex"));
  writeFileSync(join(dir, "token"), "unused: no redemption in this benchmark\n");
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
      BERTH_GATEWAY_LOG_LEVEL: "info",
      ...(values.tls ? { BERTH_GATEWAY_TLS_SELF_SIGNED_NAMES: "127.0.0.1" } : {}),
    },
    (l) => (l.includes("session gateway listening") ? (JSON.parse(l) as { url: string }).url : undefined),
  );
  // Baseline: the least a Node proxy does (node:http server -> keep-alive node:http client -> pipe), in
  // its own process, so the gateway's own cost (cookie, header hygiene, pages) can be told from the cost of
  // proxying at all on this machine.
  const bare = await start(
    "bench/src/gateway-bare-proxy.ts",
    [standin.value.replace("http://", "")],
    {},
    (l) => /listening on (\S+)/.exec(l)?.[1],
  );
  const now = Math.floor(Date.now() / 1000);
  const cookie = `berth_cnx=${signCookie({ s: "ses_bench", c: "s-bench", u: "usr_bench", k: "clu_bench", i: now, e: now + 3600 }, key)}`;
  const direct = `${standin.value}/proxy/s-bench/hello`;
  const through = `${gw.value}/proxy/s-bench/hello`;
  const check = await autocannon({ url: through, connections: 1, duration: 1, headers: { cookie } });
  if (check.non2xx > 0 || check.requests.total === 0)
    throw new Error("the gateway does not let the benchmark's cookie through");

  for (const connections of connectionCounts) {
    process.stdout.write(
      `\ngateway overhead: GET /proxy/s-bench/hello (5-byte answer), ${connections} connections, ${duration} s per run, ${rounds} rounds alternating; gateway ${values.tls ? "TLS (self-signed P-256)" : "plain HTTP"}\n`,
    );
    process.stdout.write(
      `${cpus().length} CPUs (${cpus()[0]?.model ?? "?"}), load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}; autocannon, stand-in and gateway are three processes on these CPUs\n\n`,
    );
    await autocannon({ url: direct, connections, duration: 2 });
    await autocannon({ url: through, connections, duration: 2, headers: { cookie } });
    const d: CannonResult[] = [];
    const g: CannonResult[] = [];
    const cpu = {
      directStandin: 0,
      throughStandin: 0,
      throughGateway: 0,
      directRequests: 0,
      throughRequests: 0,
      bare: 0,
      bareRequests: 0,
    };
    const b: CannonResult[] = [];
    for (let i = 0; i < rounds; i++) {
      const b0 = cpuSeconds(bare.child.pid);
      b.push(await autocannon({ url: `${bare.value}/proxy/s-bench/hello`, connections, duration }));
      cpu.bare += cpuSeconds(bare.child.pid) - b0;
      cpu.bareRequests += (b.at(-1) as CannonResult).requests.total;
      let s0 = cpuSeconds(standin.child.pid);
      d.push(await autocannon({ url: direct, connections, duration }));
      cpu.directStandin += cpuSeconds(standin.child.pid) - s0;
      cpu.directRequests += (d.at(-1) as CannonResult).requests.total;
      s0 = cpuSeconds(standin.child.pid);
      const g0 = cpuSeconds(gw.child.pid);
      g.push(await autocannon({ url: through, connections, duration, headers: { cookie } }));
      cpu.throughStandin += cpuSeconds(standin.child.pid) - s0;
      cpu.throughGateway += cpuSeconds(gw.child.pid) - g0;
      cpu.throughRequests += (g.at(-1) as CannonResult).requests.total;
      process.stdout.write(
        `round ${i + 1}  direct  ${fmt(d.at(-1) as CannonResult)}\n         gateway ${fmt(g.at(-1) as CannonResult)}\n         bare    ${fmt(b.at(-1) as CannonResult)}\n`,
      );
    }
    const avg = (xs: CannonResult[], f: (r: CannonResult) => number) => xs.reduce((s, r) => s + f(r), 0) / xs.length;
    const dr = avg(d, (r) => r.requests.average);
    const gr = avg(g, (r) => r.requests.average);
    const dp = avg(d, (r) => r.latency.p99);
    const gp = avg(g, (r) => r.latency.p99);
    const dm = avg(d, (r) => r.latency.p50);
    const gm = avg(g, (r) => r.latency.p50);
    process.stdout.write(
      `\nmean      direct  ${dr.toFixed(0)} req/s  p50 ${dm.toFixed(1)} ms  p99 ${dp.toFixed(1)} ms\n` +
        `          gateway ${gr.toFixed(0)} req/s  p50 ${gm.toFixed(1)} ms  p99 ${gp.toFixed(1)} ms\n` +
        `ratio     gateway/direct throughput ${(gr / dr).toFixed(2)} (target ≥ 0.5)   p99 overhead ${(gp - dp).toFixed(1)} ms (target ≤ 5 ms)\n` +
        `baseline  bare Node proxy ${avg(b, (r) => r.requests.average).toFixed(0)} req/s  p99 ${avg(b, (r) => r.latency.p99).toFixed(1)} ms; gateway/bare throughput ${(gr / avg(b, (r) => r.requests.average)).toFixed(2)}\n` +
        `CPU per request (load-independent): bare proxy ${((cpu.bare / cpu.bareRequests) * 1e6).toFixed(0)} µs; stand-in ${((cpu.directStandin / cpu.directRequests) * 1e6).toFixed(0)} µs direct, ${((cpu.throughStandin / cpu.throughRequests) * 1e6).toFixed(0)} µs behind the gateway; gateway ${((cpu.throughGateway / cpu.throughRequests) * 1e6).toFixed(0)} µs (cookie check + proxy)\n` +
        `gateway RSS after the HTTP runs: ${rssMiB(gw.child.pid).toFixed(0)} MiB\n`,
    );
  }

  // WebSockets held at once through the gateway.
  if (wsCount > 0) {
    const rssBefore = rssMiB(gw.child.pid);
    const wsUrl = `${gw.value.replace(/^http/, "ws")}/proxy/s-bench/ws/echo`;
    const origin = gw.value;
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
                const ws = new WebSocket(wsUrl, {
                  headers: { cookie, origin },
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
    const rssHeld = rssMiB(gw.child.pid);
    process.stdout.write(
      `\nWebSockets through the gateway: ${wsCount} opened in ${(openMs / 1000).toFixed(2)} s (batches of ${batch}), ${alive} still open after 5 s\n` +
        `echo on all at once: p50 ${pct(first, 50).toFixed(1)} ms  p99 ${pct(first, 99).toFixed(1)} ms; after holding 5 s: p50 ${pct(second, 50).toFixed(1)} ms  p99 ${pct(second, 99).toFixed(1)} ms\n` +
        `gateway RSS ${rssBefore.toFixed(0)} MiB before, ${rssHeld.toFixed(0)} MiB holding ${alive} (${(((rssHeld - rssBefore) * 1024) / Math.max(1, alive)).toFixed(1)} KiB each)\n`,
    );
    for (const w of opened) w.terminate();
  }
} finally {
  for (const c of children) c.kill("SIGTERM");
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once("exit", r)) : undefined)));
  rmSync(dir, { recursive: true, force: true });
}
