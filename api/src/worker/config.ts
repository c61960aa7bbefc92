// The worker process's configuration: every variable it reads, parsed once (worker-main.ts passes
// process.env in); every problem reported at once. Shared names mean the same as the API's (config.ts).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { leaseTimingProblems } from "@berth/controllers/kube";
import { z } from "zod";
import {
  ConfigError,
  type DatabaseConfig,
  DatabaseEnv,
  databaseConfigOf,
  type ImagesConfig,
  ImagesEnv,
  imagesConfigOf,
  KubeconfigPath,
  LogLevel,
  Namespace,
  Port,
  parseEnv,
  type Secret,
  WebhookAllowHosts,
  WebhookSecretKeys,
} from "../config.ts";

const ms = z.coerce.number().int().min(1).max(3_600_000);

/** The environment variables the worker reads. Shared names mean the same as the API's (config.ts). */
const Env = z.object({
  /** The pool: the controller runs up to 64 reconciles at once; more connections only queue in Postgres. */
  ...DatabaseEnv,
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
  /** Webhook targets trusted although internal (as the API's; docs/dev/webhooks.md). */
  BERTH_WEBHOOK_ALLOW_HOSTS: WebhookAllowHosts,
  /** The API's keys sealing webhook secrets (the dispatcher opens them to sign; it re-seals under the first). */
  BERTH_WEBHOOK_SECRET_KEYS: WebhookSecretKeys,
  /** Extra CA certificates (a PEM file) webhook receivers may be signed by. */
  BERTH_WEBHOOK_CA_FILE: z.string().min(1).optional(),
  /** Berth's registry and the bounds of imports (as the API's; docs/dev/images.md). */
  ...ImagesEnv,
  /** Imports this worker copies at once. */
  BERTH_IMPORT_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(2),
});

export interface WorkerConfig {
  database: DatabaseConfig;
  log: { level: z.output<typeof LogLevel> };
  kube: { kubeconfigPath?: string };
  systemNamespace: string;
  sessionsNamespace: string;
  identity?: string;
  lease: { durationMs: number; renewDeadlineMs: number; retryPeriodMs: number };
  maxSockets: number;
  status: { host: string; port: number };
  webhooks: { allowHosts: string[]; secretKeys: Secret; caFile?: string };
  auditRetentionDays: number;
  images: ImagesConfig;
  importConcurrency: number;
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
    database: databaseConfigOf(e),
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
    images: imagesConfigOf(e),
    importConcurrency: e.BERTH_IMPORT_CONCURRENCY,
    webhooks: {
      allowHosts: e.BERTH_WEBHOOK_ALLOW_HOSTS,
      secretKeys: e.BERTH_WEBHOOK_SECRET_KEYS,
      ...(e.BERTH_WEBHOOK_CA_FILE ? { caFile: e.BERTH_WEBHOOK_CA_FILE } : {}),
    },
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
