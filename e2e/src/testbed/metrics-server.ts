// The control plane's metrics server on loopback: VictoriaMetrics single-node, built once by
// e2e/testbed/build-metrics-server.sh into the version-keyed cache (docs/adr/0010-metrics-server.md).
// It scrapes Berth's own control-plane processes (the API's and the worker's metrics listeners) from a
// scrape file this module writes, and takes GPU clusters' series by import, which only the API sends
// (docs/dev/monitoring.md: the operator forwards through the internal plane).
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, isPortConflict } from "./ports.ts";
import { type ManagedProcess, spawnManaged } from "./process.ts";
import { rssBytes } from "./procfs.ts";

export const METRICS_BUILD_SCRIPT = fileURLToPath(new URL("../../testbed/build-metrics-server.sh", import.meta.url));

/** The folder holding `victoria-metrics` (builds it when the cache is cold: ~30 s, progress on stderr). */
export function findMetricsServerBinary(env: NodeJS.ProcessEnv = process.env): string {
  const out = execFileSync("bash", [METRICS_BUILD_SCRIPT], { stdio: ["ignore", "pipe", "inherit"], env })
    .toString()
    .trim();
  return join(out.split("\n").at(-1) ?? "", "victoria-metrics");
}

export interface ScrapeTarget {
  job: string;
  /** host:port */
  address: string;
  path?: string;
}

export interface RunningMetricsServer {
  /** Base URL, e.g. http://127.0.0.1:41234 (query API at /api/v1/query_range, import at /api/v1/import/prometheus). */
  url: string;
  pid: number;
  /** Replaces the scrape targets (Berth's own processes) and makes the server reread them. */
  setScrapeTargets(targets: readonly ScrapeTarget[]): Promise<void>;
  /** Flushes what was written; samples become searchable within about a second after (see `seen`). */
  flush(): Promise<void>;
  /** Waits (up to 15 s) until a sample of `selector` written at or after `sinceMs` can be read back. */
  seen(selector: string, sinceMs: number): Promise<void>;
  rssBytes(): number;
  stop(): Promise<void>;
}

export interface MetricsServerOptions {
  dir: string;
  /** Default: a free loopback port. */
  port?: number;
  scrapeTargets?: readonly ScrapeTarget[];
  scrapeIntervalSeconds?: number;
  retention?: string;
}

function scrapeConfig(targets: readonly ScrapeTarget[], intervalSeconds: number): string {
  const jobs = new Map<string, ScrapeTarget[]>();
  for (const t of targets)
    jobs.set(`${t.job} ${t.path ?? "/metrics"}`, [...(jobs.get(`${t.job} ${t.path ?? "/metrics"}`) ?? []), t]);
  const lines = ["global:", `  scrape_interval: ${intervalSeconds}s`, "scrape_configs:"];
  if (jobs.size === 0) return `${lines.join("\n")} []\n`;
  for (const list of jobs.values()) {
    const first = list[0] as ScrapeTarget;
    lines.push(`  - job_name: ${JSON.stringify(first.job)}`);
    lines.push(`    metrics_path: ${JSON.stringify(first.path ?? "/metrics")}`);
    lines.push("    static_configs:");
    lines.push(`      - targets: [${list.map((t) => JSON.stringify(t.address)).join(", ")}]`);
  }
  return `${lines.join("\n")}\n`;
}

export async function startMetricsServer(opts: MetricsServerOptions): Promise<RunningMetricsServer> {
  const binary = findMetricsServerBinary();
  mkdirSync(opts.dir, { recursive: true });
  const scrapeFile = join(opts.dir, "scrape.yml");
  const interval = opts.scrapeIntervalSeconds ?? 15;
  writeFileSync(scrapeFile, scrapeConfig(opts.scrapeTargets ?? [], interval));
  for (let attempt = 0; ; attempt++) {
    const port = opts.port ?? (await freePort());
    const url = `http://127.0.0.1:${port}`;
    const proc: ManagedProcess = spawnManaged({
      name: "victoria-metrics",
      command: binary,
      args: [
        `-httpListenAddr=127.0.0.1:${port}`,
        `-storageDataPath=${join(opts.dir, "data")}`,
        `-retentionPeriod=${opts.retention ?? "30d"}`,
        // Tests write and read at once; the default hides samples younger than 30 s.
        "-search.latencyOffset=0s",
        // The API caches answers itself (briefly); a second cache here would hide samples just written.
        "-search.disableCache",
        `-promscrape.config=${scrapeFile}`,
        "-promscrape.configCheckInterval=2s",
        "-loggerLevel=WARN",
      ],
      logFile: join(opts.dir, "victoria-metrics.log"),
    });
    const ready = await waitReady(url, proc);
    if (ready === "ok") {
      return {
        url,
        pid: proc.pid,
        async setScrapeTargets(targets) {
          writeFileSync(scrapeFile, scrapeConfig(targets, interval));
          await fetch(`${url}/-/reload`).catch(() => undefined);
        },
        async flush() {
          await fetch(`${url}/internal/force_flush`);
        },
        async seen(selector, sinceMs) {
          const deadline = Date.now() + 15_000;
          const qs = new URLSearchParams({ "match[]": selector, start: String(Math.floor(sinceMs / 1000)) });
          for (;;) {
            await fetch(`${url}/internal/force_flush`);
            const text = await (await fetch(`${url}/api/v1/export?${qs}`)).text();
            const newest = Math.max(
              0,
              ...text.split("\n").flatMap((l) => (l ? (JSON.parse(l).timestamps as number[]) : [])),
            );
            if (newest >= sinceMs) return;
            if (Date.now() > deadline)
              throw new Error(`no sample of ${selector} since ${new Date(sinceMs).toISOString()}`);
            await new Promise((r) => setTimeout(r, 100));
          }
        },
        rssBytes: () => rssBytes(proc.pid),
        stop: () => proc.stop(),
      };
    }
    await proc.stop();
    if (opts.port !== undefined || attempt >= 2 || !isPortConflict(proc.tail(40)))
      throw new Error(`victoria-metrics did not start:\n${proc.tail(40)}`);
  }
}

async function waitReady(url: string, proc: ManagedProcess): Promise<"ok" | "exited"> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (proc.hasExited()) return "exited";
    const ok = await fetch(`${url}/health`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) return "ok";
    await new Promise((r) => setTimeout(r, 100));
  }
  return "exited";
}
