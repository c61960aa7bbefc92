// What every handler and domain function gets: made once by buildDeps (api/src/buildDeps.ts) in main.ts
// or by a test, then injected. Every service is a field here; none is made on the side.
import type { KubeApi } from "@berth/controllers/kube";
import type { Logger } from "pino";
import type { Clock } from "./clock.ts";
import type { Config } from "./config.ts";
import type { Db } from "./db/knex.ts";
import type { ClusterClients } from "./domain/clusters/clients.ts";
import type { ClustersRuntime } from "./domain/clusters/runtime.ts";
import type { CreditsContext } from "./domain/credits/context.ts";
import type { AuthServices } from "./domain/identity/services.ts";
import type { MonitoringService } from "./domain/monitoring/queryPanel.ts";
import type { AdmissionQueues } from "./domain/sessions/admissionQueues.ts";
import type { SessionEventHub } from "./domain/sessions/eventHub.ts";
import type { SessionsRuntime } from "./domain/sessions/runtime.ts";
import type { StorageRuntime } from "./domain/storage/runtime.ts";
import type { WebhooksService } from "./domain/webhooks/service.ts";
import type { Metrics } from "./http/metrics.ts";
import type { Authenticator } from "./http/principal.ts";

export interface Deps {
  config: Config;
  db: Db;
  log: Logger;
  clock: Clock;
  /** Bearer token -> Principal (api/src/domain/identity/authenticator.ts). */
  authenticate: Authenticator;
  /** Access tokens, password hashing and the sign-in throttle. */
  auth: AuthServices;
  metrics: Metrics;
  /** Credits: the ledger's context (charging, the door, running out) and its after-ingestion passes. */
  credits: CreditsContext;
  /** The session events' LISTEN hub that SSE streams subscribe to. */
  events: SessionEventHub;
  /** Creates waiting at their organization's door (api/src/domain/sessions/admission.ts). */
  admission: AdmissionQueues;
  /** Panels over the control plane's metrics server and the relay of forwarded GPU series (docs/dev/monitoring.md). */
  monitoring: MonitoringService;
  /** Outbound webhooks: the SSRF guard endpoints' URLs pass (the worker delivers, api/src/worker/webhooks.ts). */
  webhooks: WebhooksService;
  /**
   * The management cluster's one client (sessions, the catalog, the default catalog at start-up); absent
   * when BERTH_KUBECONFIG is unset.
   */
  kube?: KubeApi;
  /**
   * The management client and a kept client per registered GPU cluster (domain/clusters/clients.ts), made
   * by the composition root; absent when BERTH_KUBECONFIG is unset.
   */
  clusterClients?: ClusterClients;
  /** Session resources and the catalog in the management cluster; absent without a management cluster. */
  sessions?: SessionsRuntime;
  /** Cluster registration, operator tokens and the internal plane; absent without a management cluster. */
  clusters?: ClustersRuntime;
  /** Storage pools and volumes in the management cluster; absent without a management cluster. */
  storage?: StorageRuntime;
}
