// The sessions bench's processes as the architecture deploys them: the API (api/src/main.ts), the worker
// (api/src/worker-main.ts) and one GPU cluster's operator (operator/src/main.ts), each its own Node process,
// talking over HTTP to each other and to the bed's clusters and Postgres. startSplit() takes over from a
// sessions bed: it stops the bed's in-process worker and operator and starts the three processes with the
// same settings, on the same fleet, database, users and cluster registration.
//
// Every child is killed when stop() runs, when this process gets SIGINT/SIGTERM, and (SIGKILL, as a last
// resort) when it exits any other way.
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@berth/api";
import { apiRbac, workerRbac } from "@berth/api/rbac";
import { AccessTokens, findUserById } from "@berth/api/testing";
import { mintControlPlaneCredential } from "@berth/e2e/clusters/credentials";
import type { SessionsBed } from "@berth/e2e/sessions";

// How long a child may take to load and start: minutes on a shared 2-CPU machine at a load of 30.
const READY_MS = 300_000;
const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const API_MAIN = here("../../api/src/main.ts");
const WORKER_MAIN = here("../../api/src/worker-main.ts");
const OPERATOR_MAIN = here("../../operator/src/main.ts");

export interface Child {
  name: string;
  readonly pid: number;
  proc: ChildProcess;
  /** The last lines it printed (stdout and stderr), for a failure's message. */
  tail: string[];
  /** Resolves with the first log line whose msg is `msg`. */
  line(msg: string, timeoutMs: number): Promise<Record<string, unknown>>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

const alive = new Set<ChildProcess>();
let hooked = false;
function hookExit(onSignal: () => Promise<void>): void {
  if (hooked) return;
  hooked = true;
  process.on("exit", () => {
    for (const p of alive) p.kill("SIGKILL");
  });
  for (const sig of ["SIGINT", "SIGTERM"] as const)
    process.once(sig, () => {
      process.stderr.write(`\n${sig}: stopping the split processes and the bed\n`);
      const force = setTimeout(() => process.exit(130), 30_000);
      force.unref();
      onSignal().finally(() => process.exit(130));
    });
}

function spawnChild(name: string, main: string, env: Record<string, string>, logDir?: string): Child {
  // Every line the child writes, kept when asked: a run that ends wrong is read from them afterwards.
  const file = logDir
    ? createWriteStream(join(logDir, `${name.replace(/[^\w.-]+/g, "-")}.log`), { flags: "a" })
    : undefined;
  const proc = spawn(process.execPath, [main], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  alive.add(proc);
  const exited = new Promise<number | null>((resolve) =>
    proc.once("exit", (code) => {
      alive.delete(proc);
      file?.end();
      resolve(code);
    }),
  );
  const tail: string[] = [];
  const waiters: { msg: string; resolve: (l: Record<string, unknown>) => void }[] = [];
  const seen = new Map<string, Record<string, unknown>>();
  const onLine = (line: string) => {
    file?.write(`${line}\n`);
    tail.push(line);
    if (tail.length > 40) tail.shift();
    // Only lines that can be waited on are parsed: the children log little, but the pipe must keep draining.
    if (!line.startsWith("{")) return;
    let l: Record<string, unknown>;
    try {
      l = JSON.parse(line);
    } catch {
      return;
    }
    const msg = String(l.msg ?? "");
    if (!seen.has(msg)) seen.set(msg, l);
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i];
      if (w?.msg !== msg) continue;
      waiters.splice(i, 1);
      w.resolve(l);
    }
  };
  for (const stream of [proc.stdout, proc.stderr]) {
    let buf = "";
    stream?.on("data", (c: Buffer) => {
      buf += c.toString();
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        onLine(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
    });
  }
  return {
    name,
    pid: proc.pid ?? -1,
    proc,
    tail,
    line(msg, timeoutMs) {
      const hit = seen.get(msg);
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${name}: no "${msg}" within ${timeoutMs} ms; last output:\n${tail.join("\n")}`)),
          timeoutMs,
        );
        const w = {
          msg,
          resolve: (l: Record<string, unknown>) => {
            clearTimeout(timer);
            resolve(l);
          },
        };
        waiters.push(w);
        exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`${name} exited (${code}) before "${msg}"; last output:\n${tail.join("\n")}`));
        });
      });
    },
    async stop(graceMs = 20_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill("SIGTERM");
      const kill = setTimeout(() => proc.kill("SIGKILL"), graceMs);
      const code = await exited;
      clearTimeout(kill);
      return code;
    },
  };
}

export interface Split {
  api: Child;
  operator: Child;
  /** Every operator started, `operator` first (one per cluster of `gpuCluster` and `moreGpuClusters`). */
  operators: Child[];
  /** The worker now running (replaced by startWorker). */
  worker: Child | undefined;
  apiUrl: string;
  /** Starts the API again (after a kill), on the same port with the same environment. */
  restartApi(): Promise<Child>;
  /** Starts the operator again (after a kill), with the same environment. */
  restartOperator(): Promise<Child>;
  /** Stops the worker gracefully (its lease released). */
  stopWorker(): Promise<void>;
  /**
   * Starts a worker; resolves once the process has loaded and campaigns for the lease ("worker started"),
   * so that a timing from there compares with an in-process start. Its line "session controller started"
   * says it leads and has synced.
   */
  startWorker(identity: string): Promise<Child>;
  children(): Child[];
  /**
   * Re-issues these users' tokens in place for the child API: same secret, its real clock, a day long (the
   * bed's are minted on its test clock and last 15 minutes).
   */
  reissueTokens(users: { id: string; token: string }[]): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Replaces the bed's in-process API, worker and operator of `gpuCluster` with child processes, and re-issues
 * the users' tokens for the child API's clock (the bed's are minted on its test clock, 15 minutes long).
 */
export async function startSplit(
  bed: SessionsBed,
  opts: {
    gpuCluster: string;
    /** More GPU clusters whose operators run as processes too (each its own). */
    moreGpuClusters?: string[];
    onSignal: () => Promise<void>;
    /** The operator's usage interval (whole seconds); default 60 s, the bed's. */
    usageIntervalMs?: number;
    /** More environment for the API and for every worker (e.g. the webhook allowlist and receivers' CA). */
    env?: { api?: Record<string, string>; worker?: Record<string, string> };
    /** Where each child's output is kept, one file per child (e.g. `worker-split-2.log`); none by default. */
    logDir?: string;
  },
): Promise<Split> {
  const children: Child[] = [];
  const stopAll = async () => {
    for (const c of [...children].reverse()) await c.stop().catch(() => {});
  };
  hookExit(async () => {
    await stopAll();
    await opts.onSignal();
  });
  const names = [opts.gpuCluster, ...(opts.moreGpuClusters ?? [])];
  const handles = names.map((n) => {
    const h = bed.gpu[n];
    if (!h) throw new Error(`no GPU cluster ${n} in the bed`);
    return h;
  });
  // Only one worker and one operator per cluster may lead: the bed's stop (releasing their leases), the children lead.
  await bed.worker.stop();
  for (const h of handles) {
    await h.operator?.stop();
    h.operator = undefined;
  }

  const mgmt = bed.fleet.clusters.find((c) => c.kind === "management");
  if (!mgmt) throw new Error("the bed has no management cluster");
  const apiCred = await mintControlPlaneCredential(mgmt, {
    name: "berth-api-split",
    rbac: apiRbac(),
  });
  const workerCred = await mintControlPlaneCredential(mgmt, { name: "berth-worker-split", rbac: workerRbac() });
  const apiKubeconfig = join(bed.dir, "api-split.kubeconfig");
  const workerKubeconfig = join(bed.dir, "worker-split.kubeconfig");
  writeFileSync(apiKubeconfig, apiCred.kubeconfig, { mode: 0o600 });
  writeFileSync(workerKubeconfig, workerCred.kubeconfig, { mode: 0o600 });
  const config = bed.t.deps.config;
  const database = bed.t.database.url;

  try {
    const [apiPort, internalPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
    const apiEnv = {
      DATABASE_URL: database,
      BERTH_JWT_SECRET: config.auth.jwtSecret.reveal(),
      BERTH_WEBHOOK_SECRET_KEYS: config.webhooks.secretKeys.reveal(),
      BERTH_API_HOST: "127.0.0.1",
      BERTH_API_PORT: String(apiPort),
      BERTH_INTERNAL_HOST: "127.0.0.1",
      BERTH_INTERNAL_PORT: String(internalPort),
      BERTH_INTERNAL_ALLOW_CIDRS: "127.0.0.0/8",
      // Its own port: the default (9464) may be held by anything else on the machine, and a start that
      // cannot bind it fails.
      BERTH_METRICS_HOST: "127.0.0.1",
      BERTH_METRICS_PORT: String(metricsPort),
      BERTH_KUBECONFIG: apiKubeconfig,
      BERTH_BOOTSTRAP_PASSWORD: "bench-bootstrap-password",
      BERTH_LOG_LEVEL: "info",
      ...opts.env?.api,
    };
    const api = spawnChild("api", API_MAIN, apiEnv, opts.logDir);
    children.push(api);
    const listening = await api.line("public API listening", READY_MS);
    const internal = await api.line("internal plane listening", 10_000);
    const apiUrl = String(listening.url);
    const internalUrl = String(internal.url);

    const operatorEnvOf = (h: (typeof handles)[number]) => ({
      BERTH_OPERATOR_CLUSTER_ID: h.id,
      BERTH_OPERATOR_KUBECONFIG: h.kubeconfigPath,
      BERTH_OPERATOR_CONTROL_PLANE_URL: internalUrl,
      BERTH_OPERATOR_TOKEN_FILE: h.tokenFile,
      BERTH_OPERATOR_REQUEST_TIMEOUT_MS: "5000",
      BERTH_OPERATOR_HTTP_HOST: "127.0.0.1",
      BERTH_OPERATOR_HTTP_PORT: "0",
      BERTH_OPERATOR_IDENTITY: `${h.name}-op-split`,
      // As the bed's operator: a short lease, the bench's inventory timings, usage every 60 s unless asked.
      BERTH_OPERATOR_LEASE_DURATION_MS: "5000",
      BERTH_OPERATOR_LEASE_RENEW_DEADLINE_MS: "4000",
      BERTH_OPERATOR_LEASE_RETRY_PERIOD_MS: "250",
      BERTH_OPERATOR_INVENTORY_DEBOUNCE_MS: "500",
      BERTH_OPERATOR_INVENTORY_RESYNC_MS: "60000",
      BERTH_OPERATOR_INVENTORY_PAGE_SIZE: "500",
      BERTH_OPERATOR_USAGE_INTERVAL_MS: String(opts.usageIntervalMs ?? 60_000),
      BERTH_OPERATOR_USAGE_GRACE_MS: "200",
      BERTH_OPERATOR_BACKOFF_BASE_MS: "100",
      BERTH_OPERATOR_BACKOFF_MAX_MS: "1000",
      BERTH_OPERATOR_BACKOFF_JITTER: "0.5",
      BERTH_OPERATOR_LOG_LEVEL: "info",
    });
    const operatorEnv = operatorEnvOf(handles[0] as (typeof handles)[number]);
    const operators: Child[] = [];
    for (const [i, h] of handles.entries()) {
      const op = spawnChild(i === 0 ? "operator" : `operator ${h.name}`, OPERATOR_MAIN, operatorEnvOf(h), opts.logDir);
      children.push(op);
      operators.push(op);
    }
    for (const op of operators) await op.line("operator started", READY_MS);
    const operator = operators[0] as Child;

    const respawn = async (kind: "api" | "operator", main: string, env: Record<string, string>, ready: string) => {
      const again = spawnChild(kind, main, env, opts.logDir);
      children.push(again);
      split[kind] = again;
      await again.line(ready, READY_MS);
      return again;
    };
    const split: Split = {
      api,
      operator,
      operators,
      worker: undefined,
      apiUrl,
      // Same port and environment: the operator's control-plane URL and the clients' stay valid.
      restartApi: () => respawn("api", API_MAIN, apiEnv, "public API listening"),
      restartOperator: () => respawn("operator", OPERATOR_MAIN, operatorEnv, "operator started"),
      async stopWorker() {
        const w = split.worker;
        split.worker = undefined;
        if (!w) return;
        const code = await w.stop();
        if (code !== 0) throw new Error(`the worker exited ${code}; last output:\n${w.tail.join("\n")}`);
      },
      async startWorker(identity) {
        const w = spawnChild(
          `worker ${identity}`,
          WORKER_MAIN,
          {
            DATABASE_URL: database,
            BERTH_WEBHOOK_SECRET_KEYS: config.webhooks.secretKeys.reveal(),
            BERTH_KUBECONFIG: workerKubeconfig,
            BERTH_WORKER_IDENTITY: identity,
            // The bed's worker pool (20) and production lease timings, as the in-process bench has them.
            BERTH_DATABASE_POOL_MAX: "20",
            BERTH_WORKER_LEASE_DURATION_MS: "15000",
            BERTH_WORKER_LEASE_RENEW_DEADLINE_MS: "10000",
            BERTH_WORKER_LEASE_RETRY_PERIOD_MS: "2000",
            BERTH_WORKER_STATUS_HOST: "127.0.0.1",
            BERTH_WORKER_STATUS_PORT: "0",
            BERTH_LOG_LEVEL: "info",
            ...opts.env?.worker,
          },
          opts.logDir,
        );
        children.push(w);
        split.worker = w;
        await w.line("worker started", READY_MS);
        return w;
      },
      children: () => children.filter((c) => c.proc.exitCode === null && c.proc.signalCode === null),
      async reissueTokens(users) {
        const tokens = new AccessTokens({ secret: config.auth.jwtSecret.reveal(), ttlSeconds: 24 * 3600 });
        for (const u of users) {
          const row = await findUserById(bed.t.database.db, u.id);
          if (!row) throw new Error(`no user ${u.id}`);
          u.token = (await tokens.issue({ userId: u.id, tokenVersion: row.token_version })).token;
        }
      },
      stop: stopAll,
    };
    await (await split.startWorker("worker-split-1")).line("session controller started", READY_MS);
    return split;
  } catch (err) {
    await stopAll();
    throw err;
  }
}
