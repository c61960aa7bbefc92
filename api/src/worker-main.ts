// The worker process: the leader-elected session controllers and billing's loop (startSessionsWorker, as
// `npm start` runs them in one process), configured from the environment once, stopped gracefully on
// SIGTERM/SIGINT (the lease is released, so a standby replica leads at once). Any number of replicas may
// run; one leads. Like main.ts, the only file of the worker that reads process.env.
//
//   DATABASE_URL=postgres://… BERTH_KUBECONFIG=worker.kubeconfig node api/src/worker-main.ts

import { existsSync } from "node:fs";
import { join } from "node:path";
import { configOrExit, type RunningWorker, runMain, startStatusServer, stopOnSignals } from "@berth/controllers";
import { leaseTimingProblems } from "@berth/controllers/kube";
import { KubeConfig } from "@kubernetes/client-node";
import pino from "pino";
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { z } from "zod";
import {
  ConfigError,
  DatabaseUrl,
  KubeconfigPath,
  LogLevel,
  Namespace,
  PoolMax,
  Port,
  parseEnv,
  type Secret,
} from "./config.ts";
import { connect } from "./db/knex.ts";
import { startSessionsWorker } from "./worker/sessions.ts";

const ms = z.coerce.number().int().min(1).max(3_600_000);

/** The environment variables the worker reads. Shared names mean the same as the API's (config.ts). */
const Env = z.object({
  DATABASE_URL: DatabaseUrl,
  /** The controller runs up to 64 reconciles at once; more connections than that only queue in Postgres. */
  BERTH_DATABASE_POOL_MAX: PoolMax,
  BERTH_LOG_LEVEL: LogLevel,
  /** kubeconfig of the management cluster (the worker's own credential); unset = in-cluster / KUBECONFIG. */
  BERTH_KUBECONFIG: KubeconfigPath.optional(),
  /** Where cluster credentials and the worker's Lease live. */
  BERTH_SYSTEM_NAMESPACE: Namespace.default("berth-system"),
  /** Namespace of session pods (and their mirrors) on the GPU clusters. */
  BERTH_SESSIONS_NAMESPACE: Namespace.default("berth-sessions"),
  /** This replica's name in the Lease; default POD_NAME, else the host name plus a random suffix. */
  BERTH_WORKER_IDENTITY: z.string().min(1).max(253).optional(),
  POD_NAME: z.string().min(1).max(253).optional(),
  BERTH_WORKER_LEASE_DURATION_MS: ms.default(15_000),
  BERTH_WORKER_LEASE_RENEW_DEADLINE_MS: ms.default(10_000),
  BERTH_WORKER_LEASE_RETRY_PERIOD_MS: ms.default(2_000),
  /** Client connections per cluster: the real bound on dispatch throughput. */
  BERTH_WORKER_MAX_SOCKETS: z.coerce.number().int().min(1).max(1024).default(64),
  /** The worker's own listener: /healthz for probes, /metrics for Prometheus (0: a port the system picks). */
  BERTH_WORKER_STATUS_HOST: z.string().min(1).default("0.0.0.0"),
  BERTH_WORKER_STATUS_PORT: Port.default(8082),
  /** How long audit rows are kept before the retention loop purges them. */
  BERTH_AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(365),
});

export interface WorkerConfig {
  database: { url: Secret; poolMax: number };
  log: { level: z.output<typeof LogLevel> };
  kube: { kubeconfigPath?: string };
  systemNamespace: string;
  sessionsNamespace: string;
  identity?: string;
  lease: { durationMs: number; renewDeadlineMs: number; retryPeriodMs: number };
  maxSockets: number;
  status: { host: string; port: number };
  auditRetentionDays: number;
}

/** Parses the environment into the worker's configuration; throws ConfigError listing every problem at once. */
export function parseWorkerConfig(env: Record<string, string | undefined>): WorkerConfig {
  const problems: string[] = [];
  let e: z.output<typeof Env> | undefined;
  try {
    e = parseEnv(Env, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }
  // Every problem at once: what the schema cannot judge is judged even when other variables are wrong.
  problems.push(...leaseProblems(env), ...clusterProblems(env));
  if (!e || problems.length > 0) throw new ConfigError(problems);
  const identity = e.BERTH_WORKER_IDENTITY ?? e.POD_NAME;
  return {
    database: { url: e.DATABASE_URL, poolMax: e.BERTH_DATABASE_POOL_MAX },
    log: { level: e.BERTH_LOG_LEVEL },
    kube: e.BERTH_KUBECONFIG ? { kubeconfigPath: e.BERTH_KUBECONFIG } : {},
    systemNamespace: e.BERTH_SYSTEM_NAMESPACE,
    sessionsNamespace: e.BERTH_SESSIONS_NAMESPACE,
    ...(identity ? { identity } : {}),
    lease: {
      durationMs: e.BERTH_WORKER_LEASE_DURATION_MS,
      renewDeadlineMs: e.BERTH_WORKER_LEASE_RENEW_DEADLINE_MS,
      retryPeriodMs: e.BERTH_WORKER_LEASE_RETRY_PERIOD_MS,
    },
    maxSockets: e.BERTH_WORKER_MAX_SOCKETS,
    status: { host: e.BERTH_WORKER_STATUS_HOST, port: e.BERTH_WORKER_STATUS_PORT },
    auditRetentionDays: e.BERTH_AUDIT_RETENTION_DAYS,
  };
}

const LeaseEnv = Env.pick({
  BERTH_WORKER_LEASE_DURATION_MS: true,
  BERTH_WORKER_LEASE_RENEW_DEADLINE_MS: true,
  BERTH_WORKER_LEASE_RETRY_PERIOD_MS: true,
});

/** The elector's rule (controllers' leaseTimingProblems), in the worker's variable names. */
function leaseProblems(env: Record<string, string | undefined>): string[] {
  const l = LeaseEnv.safeParse(env);
  if (!l.success) return []; // a timing that does not parse is reported by the whole schema
  const names = {
    renewDeadlineMs: "BERTH_WORKER_LEASE_RENEW_DEADLINE_MS: must be less than BERTH_WORKER_LEASE_DURATION_MS",
    retryPeriodMs: "BERTH_WORKER_LEASE_RETRY_PERIOD_MS: must be less than BERTH_WORKER_LEASE_RENEW_DEADLINE_MS",
  };
  return leaseTimingProblems({
    durationMs: l.data.BERTH_WORKER_LEASE_DURATION_MS,
    renewDeadlineMs: l.data.BERTH_WORKER_LEASE_RENEW_DEADLINE_MS,
    retryPeriodMs: l.data.BERTH_WORKER_LEASE_RETRY_PERIOD_MS,
  }).map((field) => names[field]);
}

/**
 * The worker cannot run without its cluster. Unset, client-node falls back to KUBECONFIG, ~/.kube/config,
 * the pod's service account, and at last to http://localhost:8080 — where a worker would say it started
 * and only fail its lease calls.
 */
function clusterProblems(env: Record<string, string | undefined>): string[] {
  if (env.BERTH_KUBECONFIG || env.KUBECONFIG || env.KUBERNETES_SERVICE_HOST) return [];
  if (env.HOME && existsSync(join(env.HOME, ".kube", "config"))) return [];
  return ["BERTH_KUBECONFIG: required outside a Kubernetes pod (or set KUBECONFIG)"];
}

async function main(): Promise<void> {
  const config = configOrExit(() => parseWorkerConfig(process.env), ConfigError);
  const log = pino({ level: config.log.level, base: { service: "berth-worker" } });
  const kubeConfig = new KubeConfig();
  if (config.kube.kubeconfigPath) kubeConfig.loadFromFile(config.kube.kubeconfigPath);
  else kubeConfig.loadFromDefault();
  // The status listener first: a port that is taken stops this replica before it can lead.
  let worker: RunningWorker | undefined;
  const registry = workerMetrics(() => worker);
  const status = await startStatusServer({
    ...config.status,
    registry,
    // A follower is healthy; a leader once its session controller runs (it has synced its informers).
    health: () => {
      if (!worker) return { ok: false, role: "starting" };
      const leader = worker.isLeader();
      const running = worker.controller() !== undefined;
      return { ok: !leader || running, role: leader ? "leader" : "follower", identity: worker.identity };
    },
  });
  const db = connect(config.database.url.reveal(), { poolMax: config.database.poolMax });
  const started = await startSessionsWorker({
    db,
    kubeConfig,
    log,
    controlPlaneNamespace: config.systemNamespace,
    maxSockets: config.maxSockets,
    lease: config.lease,
    options: { sessionsNamespace: config.sessionsNamespace },
    retention: { auditRetentionDays: config.auditRetentionDays },
    ...(config.identity ? { identity: config.identity } : {}),
  }).catch(async (err: unknown) => {
    await db.destroy();
    await status.close();
    throw err;
  });
  worker = started;
  registry.setDefaultLabels({ identity: started.identity });
  log.info({ identity: started.identity, status: status.url }, "worker started");

  // Past the lease's duration a follower has taken over anyway; the deadline loses nothing. The status
  // listener goes last, so probes and scrapes see the lease being released.
  stopOnSignals(
    log,
    async () => {
      await started.stop();
      await db.destroy();
      await status.close();
    },
    "worker stopped",
  );
}

/** Process metrics and whether this replica holds the lease (labelled with its identity once it runs). */
function workerMetrics(worker: () => { isLeader(): boolean } | undefined): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: "berth_worker_leader",
    help: "1 while this worker replica holds the lease (and so runs the session controllers), else 0",
    registers: [registry],
    collect() {
      this.set(worker()?.isLeader() ? 1 : 0);
    },
  });
  return registry;
}

if (import.meta.main) runMain("berth-worker", main);
