// The worker process's wiring: the session controllers (controllers/src/worker.ts) with their Postgres
// store and a client per registered GPU cluster from its stored credential. Used by `npm start`, the
// end-to-end tests and the bench; run alone with `node api/src/worker-main.ts` (npm run start:worker -w api).

import { type RunningWorker, type SessionControllerOptions, startWorker } from "@berth/controllers";
import { HttpKube, type KubeApi } from "@berth/controllers/kube";
import { type Cluster, ClusterKind, resourcePath } from "@berth/crds";
import type { KubeConfig } from "@kubernetes/client-node";
import type { Knex } from "knex";
import type { Logger } from "pino";
import type { ImagesConfig } from "../config.ts";
import { ManagementStore } from "../domain/clusters/store.ts";
import { type BillingWorkerOptions, billingWorkerLoop } from "./billing.ts";
import { BuildLoop } from "./builds.ts";
import { ClusterHealthLoop, type ClusterHealthOptions } from "./clusterHealthLoop.ts";
import { ImportLoop, type ImportLoopOptions } from "./imports.ts";
import { reclaimWorkerLoop } from "./reclaimLoop.ts";
import { RetentionLoop, type RetentionOptions } from "./retentionLoop.ts";
import { createWorkerStore } from "./sessionStore.ts";
import { type WebhookWorkerOptions, webhookWorkerLoop } from "./webhooks.ts";

export { ReclaimLoop, reclaimWorkerLoop } from "./reclaimLoop.ts";
export type { WebhookWorkerOptions };

export interface SessionsWorkerOptions {
  db: Knex;
  /** The management cluster (the worker's own least-privilege credential). */
  kubeConfig: KubeConfig;
  log: Logger;
  /** Where credential Secrets and the worker's Lease live. Default berth-system. */
  controlPlaneNamespace?: string;
  identity?: string;
  /** Client connections per cluster: the real bound on dispatch throughput. Default 64. */
  maxSockets?: number;
  lease?: { durationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number };
  options?: Partial<SessionControllerOptions>;
  /** Billing's loop (api/src/worker/billingLoop.ts): pass interval and options; `false` leaves it out. */
  billing?: false | Omit<BillingWorkerOptions, "db" | "kubeConfig" | "log">;
  /** The webhook dispatcher (api/src/worker/webhooks.ts); `false` leaves it out. */
  webhooks?: false | WebhookWorkerOptions;
  /** Retention of the audit log and notifications (api/src/worker/retentionLoop.ts); `false` leaves it out. */
  retention?: false | RetentionOptions;
  /** Imports of private images (api/src/worker/imports.ts): runs when Berth's registry is configured. */
  images?: { config: ImagesConfig } & ImportLoopOptions;
  /** Clusters that stop reporting (api/src/worker/clusterHealthLoop.ts); `false` leaves it out. */
  clusterHealth?: false | ClusterHealthOptions;
  /** Idle auto-pause and time limits (api/src/worker/reclaimLoop.ts); `false` leaves it out. */
  reclaim?: false | { intervalMs?: number; clock?: { now(): Date } };
}

export async function startSessionsWorker(o: SessionsWorkerOptions): Promise<RunningWorker> {
  const ns = o.controlPlaneNamespace ?? "berth-system";
  const kube = new HttpKube(o.kubeConfig, { maxSockets: o.maxSockets ?? 64, userAgent: "berth-worker" });
  const secrets = new ManagementStore(o.kubeConfig, ns);
  const clusterClient = async (cluster: Cluster): Promise<KubeApi> => {
    const cred = await secrets.readCredential(cluster.spec.credentialSecretRef);
    return new HttpKube(cred, { maxSockets: o.maxSockets ?? 64, userAgent: "berth-worker" });
  };
  // Build clusters are named by their Berth id (clu_…): found among the Cluster resources.
  const byId = new Map<string, { api: KubeApi; until: number }>();
  const clusterById = async (id: string): Promise<KubeApi> => {
    const cached = byId.get(id);
    if (cached && cached.until > Date.now()) return cached.api;
    const list = await kube.json<{ items: Cluster[] }>("GET", resourcePath(ClusterKind));
    const cluster = list.items.find((c) => c.spec.id === id);
    if (!cluster) throw new Error(`no Cluster resource for ${id}`);
    const api = await clusterClient(cluster);
    byId.set(id, { api, until: Date.now() + 300_000 }); // a rotated credential is read again within 5 minutes
    return api;
  };
  return startWorker({
    kube,
    store: createWorkerStore(o.db, o.log),
    clusterClient,
    log: o.log,
    ...(o.identity ? { identity: o.identity } : {}),
    lease: { namespace: ns, name: "berth-worker", ...o.lease },
    ...(o.options ? { options: o.options } : {}),
    loops: [
      ...(o.billing === false
        ? []
        : [billingWorkerLoop({ db: o.db, kubeConfig: o.kubeConfig, log: o.log, ...o.billing })]),
      ...(o.webhooks === false ? [] : [webhookWorkerLoop({ db: o.db, log: o.log, ...o.webhooks })]),
      ...(o.retention === false ? [] : [new RetentionLoop({ db: o.db, log: o.log, ...o.retention })]),
      ...(o.images?.config.registry
        ? [
            new ImportLoop({ db: o.db, kube, log: o.log, ...o.images }),
            new BuildLoop({ db: o.db, kube, log: o.log, config: o.images.config, clusterClient: clusterById }),
          ]
        : []),
      ...(o.clusterHealth === false ? [] : [new ClusterHealthLoop({ db: o.db, log: o.log, ...o.clusterHealth })]),
      ...(o.reclaim === false
        ? []
        : [reclaimWorkerLoop({ db: o.db, kubeConfig: o.kubeConfig, log: o.log, ...o.reclaim })]),
    ],
  });
}
