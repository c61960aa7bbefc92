// The worker process's composition root: its Kubernetes clients (the management cluster's one client and a
// kept client per registered GPU cluster, made once here), the session controllers (controllers/src/worker.ts)
// with their Postgres store, and the loops the leader runs. Used by `npm start`, the end-to-end tests and
// the bench; run alone with `node api/src/worker-main.ts` (npm run start:worker -w api).

import { type RunningWorker, type SessionControllerOptions, startWorker as startControllers } from "@berth/controllers";
import type { KubeConfig } from "@kubernetes/client-node";
import type { Knex } from "knex";
import type { Logger } from "pino";
import { makeClusterClients } from "../buildDeps.ts";
import type { ImagesConfig } from "../config.ts";
import { fairShareReader } from "../domain/fairshare/placementInput.ts";
import { makeSessionsRuntime } from "../domain/sessions/runtime.ts";
import { type BillingWorkerOptions, billingWorkerLoop } from "./billing.ts";
import { BuildLoop } from "./builds.ts";
import { capacityReclaimWorkerLoop } from "./capacityReclaimLoop.ts";
import { ClusterHealthLoop, type ClusterHealthOptions } from "./clusterHealthLoop.ts";
import { ImportLoop, type ImportLoopOptions } from "./imports.ts";
import { reclaimWorkerLoop } from "./reclaimLoop.ts";
import { RetentionLoop, type RetentionOptions } from "./retentionLoop.ts";
import { createWorkerStore } from "./sessionStore.ts";
import { SnapshotLoop, type SnapshotLoopOptions } from "./snapshots.ts";
import { UserImportLoop, type UserImportLoopOptions } from "./userImports.ts";
import { type WebhookWorkerOptions, webhookWorkerLoop } from "./webhooks.ts";

export { CapacityReclaimLoop, capacityReclaimWorkerLoop } from "./capacityReclaimLoop.ts";
export { ReclaimLoop, reclaimWorkerLoop } from "./reclaimLoop.ts";
export type { WebhookWorkerOptions };

export interface WorkerOptions {
  db: Knex;
  /** The management cluster (the worker's own least-privilege credential). */
  kubeConfig: KubeConfig;
  log: Logger;
  /** Where credential Secrets and the worker's Lease live. Default berth-system. */
  controlPlaneNamespace?: string;
  identity?: string;
  /** Client connections per cluster: the real bound on dispatch throughput. Default 64. */
  maxSockets?: number;
  /**
   * A kept GPU-cluster client's credential Secret is read again after this long, so a credential rewritten
   * in place is used from then on (api/src/domain/clusters/clients.ts). Default 5 minutes.
   */
  clusterCredentialRecheckMs?: number;
  lease?: { durationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number };
  options?: Partial<SessionControllerOptions>;
  /** Billing's loop (api/src/worker/billingLoop.ts): pass interval and options; `false` leaves it out. */
  billing?: false | Omit<BillingWorkerOptions, "db" | "kube" | "log">;
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
  /**
   * How long the placement pass keeps fair share's decayed usage before it reads it again
   * (api/src/domain/fairshare/placementInput.ts). Default 30 s.
   */
  fairShareUsageTtlMs?: number;
  /** Fair share's reclaim of borrowed capacity (api/src/worker/capacityReclaimLoop.ts); `false` leaves it out. */
  capacityReclaim?: false | { intervalMs?: number; clock?: { now(): Date } };
  /** Volume snapshots on the GPU clusters (api/src/worker/snapshots.ts); `false` leaves it out. */
  snapshots?: false | SnapshotLoopOptions;
  /**
   * Bulk user imports (api/src/worker/userImports.ts); `false` leaves them out. Its keys default to the
   * webhooks' (BERTH_WEBHOOK_SECRET_KEYS): without keys it cannot seal temporary passwords and stays out.
   */
  userImports?:
    | false
    | (Omit<UserImportLoopOptions, "secretKeys"> & { secretKeys?: UserImportLoopOptions["secretKeys"] });
}

export async function startWorker(o: WorkerOptions): Promise<RunningWorker> {
  const ns = o.controlPlaneNamespace ?? "berth-system";
  const clients = makeClusterClients(o.kubeConfig, {
    userAgent: "berth-worker",
    maxSockets: o.maxSockets ?? 64,
    ...(o.clusterCredentialRecheckMs !== undefined ? { credentialRecheckMs: o.clusterCredentialRecheckMs } : {}),
  });
  const kube = clients.management;
  const importKeys =
    (o.userImports ? o.userImports.secretKeys : undefined) ?? (o.webhooks ? o.webhooks.secretKeys : undefined) ?? [];
  if (o.userImports !== false && importKeys.length === 0)
    o.log.warn("no secret keys (BERTH_WEBHOOK_SECRET_KEYS): user imports are not run by this worker");
  const running = await startControllers({
    kube,
    store: createWorkerStore(o.db, o.log, {
      fairShare: fairShareReader({
        db: o.db,
        sessions: makeSessionsRuntime(kube),
        ...(o.fairShareUsageTtlMs !== undefined ? { usageTtlMs: o.fairShareUsageTtlMs } : {}),
      }),
    }),
    clusterClient: (cluster) => clients.forCluster(cluster),
    log: o.log,
    ...(o.identity ? { identity: o.identity } : {}),
    lease: { namespace: ns, name: "berth-worker", ...o.lease },
    ...(o.options ? { options: o.options } : {}),
    loops: [
      ...(o.billing === false ? [] : [billingWorkerLoop({ db: o.db, kube, log: o.log, ...o.billing })]),
      ...(o.webhooks === false ? [] : [webhookWorkerLoop({ db: o.db, log: o.log, ...o.webhooks })]),
      ...(o.retention === false ? [] : [new RetentionLoop({ db: o.db, log: o.log, ...o.retention })]),
      ...(o.images?.config.registry
        ? [
            new ImportLoop({ db: o.db, kube, log: o.log, ...o.images }),
            new BuildLoop({
              db: o.db,
              kube,
              log: o.log,
              config: o.images.config,
              clusterClient: (id) => clients.forClusterId(id),
            }),
          ]
        : []),
      ...(o.clusterHealth === false ? [] : [new ClusterHealthLoop({ db: o.db, log: o.log, ...o.clusterHealth })]),
      ...(o.reclaim === false ? [] : [reclaimWorkerLoop({ db: o.db, kube, log: o.log, ...o.reclaim })]),
      ...(o.capacityReclaim === false
        ? []
        : [
            capacityReclaimWorkerLoop({
              db: o.db,
              kube,
              log: o.log,
              ...o.capacityReclaim,
              ...(o.billing !== false && o.billing?.options ? { creditsOptions: o.billing.options } : {}),
            }),
          ]),
      ...(o.snapshots === false
        ? []
        : [
            new SnapshotLoop({
              db: o.db,
              kube,
              log: o.log,
              clusterClient: (id) => clients.forClusterId(id),
              ...o.snapshots,
            }),
          ]),
      ...(o.userImports === false || importKeys.length === 0
        ? []
        : [new UserImportLoop({ db: o.db, log: o.log, ...o.userImports, secretKeys: importKeys })]),
    ],
  });
  return {
    ...running,
    async stop(opts) {
      await running.stop(opts);
      // The root made the clients: it lets go of them, once nothing runs that uses them.
      clients.close();
    },
  };
}
