// The API process's composition root: the one place its services are made. main.ts (startApi) calls it
// once; tests call it through http.test-support.ts' testDeps. What needs the management cluster is made
// only when a KubeConfig is given; the clusters runtime (async: it loads the signing key) comes built.
// makeClusterClients is where both processes' Kubernetes clients are made (the worker's root uses it too).
import { HttpKube, type HttpKubeOptions, type KubeApi } from "@berth/controllers/kube";
import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { type Clock, systemClock } from "./clock.ts";
import type { Config } from "./config.ts";
import type { Db } from "./db/knex.ts";
import type { Deps } from "./deps.ts";
import { ClusterClients } from "./domain/clusters/clients.ts";
import type { ClustersRuntime } from "./domain/clusters/runtime.ts";
import { CreditsContext, type CreditsOptions, catalogOfferings, type OfferingRates } from "./domain/credits/context.ts";
import { createAuthenticator } from "./domain/identity/authenticator.ts";
import { createAuthServices } from "./domain/identity/services.ts";
import { createMetricsServerClient, type MetricsServerClient } from "./domain/monitoring/metricsServer.ts";
import { MonitoringService } from "./domain/monitoring/queryPanel.ts";
import { AdmissionQueues } from "./domain/sessions/admissionQueues.ts";
import { SessionEventHub } from "./domain/sessions/eventHub.ts";
import { makeSessionsRuntime, type SessionsRuntime } from "./domain/sessions/runtime.ts";
import { makeStorageRuntime } from "./domain/storage/runtime.ts";
import { parseSecretKeys } from "./domain/webhooks/secretBox.ts";
import { makeWebhooksService } from "./domain/webhooks/service.ts";
import type { Resolver } from "./domain/webhooks/ssrf.ts";
import { createMetrics, type Metrics } from "./http/metrics.ts";
import type { Authenticator } from "./http/principal.ts";

/**
 * The management cluster's one client and the maker of GPU clusters' clients, for one process: the only
 * `new HttpKube` of the API and the worker (scripts/boundaries.test.ts keeps it so).
 */
export function makeClusterClients(
  kubeConfig: KubeConfig,
  opts: { userAgent?: string; maxSockets?: number; credentialRecheckMs?: number } = {},
): ClusterClients {
  const base: HttpKubeOptions = { maxSockets: opts.maxSockets ?? 64, userAgent: opts.userAgent ?? "berth-api" };
  return new ClusterClients({
    management: new HttpKube(kubeConfig, base),
    connect: (cred, o) => new HttpKube(cred, { ...base, ...o }),
    ...(opts.credentialRecheckMs !== undefined ? { recheckMs: opts.credentialRecheckMs } : {}),
  });
}

export interface DepsParts {
  db: Db;
  log: Logger;
  clock?: Clock;
  /** Default: the identity domain's token verification against Postgres. */
  authenticate?: Authenticator;
  /** Default: a fresh registry with the process's default metrics. */
  metrics?: Metrics;
  /** The management cluster: sessions (and with them the catalog's offering rates) need it. */
  kubeConfig?: KubeConfig;
  /** The process's Kubernetes clients; default: made from kubeConfig when there is one. */
  clusterClients?: ClusterClients;
  /** The management cluster's one client; default: clusterClients' management client. */
  kube?: KubeApi;
  /** Default: made over `kube` when there is one. Tests give one over a fake management cluster. */
  sessions?: SessionsRuntime;
  clusters?: ClustersRuntime;
  /** Default: the live catalog's offerings through `sessions`. */
  offerings?: OfferingRates;
  creditsOptions?: Partial<CreditsOptions>;
  /** Default: a client of config.monitoring.serverUrl (none configured: monitoring answers `unavailable`). */
  metricsServer?: MetricsServerClient;
  /** How webhook host names are resolved (default: the system's resolver). Tests inject one. */
  webhookResolver?: Resolver;
}

export function buildDeps(config: Config, parts: DepsParts): Deps {
  const { db, log } = parts;
  const clock = parts.clock ?? systemClock;
  const clusterClients =
    parts.clusterClients ??
    parts.clusters?.clients ??
    (parts.kubeConfig ? makeClusterClients(parts.kubeConfig) : undefined);
  const kube = parts.kube ?? clusterClients?.management;
  const sessions = parts.sessions ?? (kube ? makeSessionsRuntime(kube) : undefined);
  return {
    config,
    db,
    log,
    clock,
    authenticate: parts.authenticate ?? createAuthenticator({ db, config, clock }),
    auth: createAuthServices({ db, config, clock }),
    metrics: parts.metrics ?? createMetrics(),
    credits: new CreditsContext({
      db,
      clock,
      log,
      offerings: parts.offerings ?? catalogOfferings(sessions?.catalog),
      ...(parts.creditsOptions ? { options: parts.creditsOptions } : {}),
    }),
    events: new SessionEventHub(db, log),
    admission: new AdmissionQueues(),
    monitoring: new MonitoringService({
      db,
      server: parts.metricsServer ?? createMetricsServerClient({ url: config.monitoring?.serverUrl }),
      now: () => clock.now().getTime(),
    }),
    webhooks: makeWebhooksService({
      allowHosts: config.webhooks.allowHosts,
      secretKeys: parseSecretKeys(config.webhooks.secretKeys.reveal()),
      ...(parts.webhookResolver ? { resolve: parts.webhookResolver } : {}),
    }),
    ...(kube ? { kube } : {}),
    ...(clusterClients ? { clusterClients } : {}),
    ...(sessions ? { sessions } : {}),
    ...(parts.clusters ? { clusters: parts.clusters } : {}),
    ...(sessions ? { storage: makeStorageRuntime(sessions) } : {}),
  };
}
