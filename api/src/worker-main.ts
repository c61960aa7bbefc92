// The worker process: the leader-elected session controllers and billing's loop (startWorker, as
// `npm start` runs them in one process), configured from the environment once, stopped gracefully on
// SIGTERM/SIGINT (the lease is released, so a standby replica leads at once). Any number of replicas may
// run; one leads. Like main.ts, the only file of the worker that reads process.env.
//
//   DATABASE_URL=postgres://… BERTH_KUBECONFIG=worker.kubeconfig node api/src/worker-main.ts

import { readFileSync } from "node:fs";
import { configOrExit, type RunningWorker, runMain, startStatusServer, stopOnSignals } from "@berth/controllers";
import { KubeConfig } from "@kubernetes/client-node";
import pino from "pino";
import { ConfigError } from "./config.ts";
import { connect, DATABASE_WAIT_MS, waitForDatabase, waitForSchema } from "./db/knex.ts";
import { parseSecretKeys } from "./domain/webhooks/secretBox.ts";
import { parseWorkerConfig } from "./worker/config.ts";
import { workerMetrics } from "./worker/metrics.ts";
import { startWorker } from "./worker/worker.ts";

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
  const db = connect(config.database.url.reveal(), config.database);
  await (async () => {
    await waitForDatabase(db, { timeoutMs: DATABASE_WAIT_MS, log });
    await waitForSchema(db, { timeoutMs: DATABASE_WAIT_MS, log });
  })().catch(async (err: unknown) => {
    await db.destroy();
    await status.close();
    throw err;
  });
  const started = await startWorker({
    db,
    kubeConfig,
    log,
    controlPlaneNamespace: config.systemNamespace,
    maxSockets: config.maxSockets,
    lease: config.lease,
    options: { sessionsNamespace: config.sessionsNamespace },
    webhooks: {
      allowHosts: config.webhooks.allowHosts,
      secretKeys: parseSecretKeys(config.webhooks.secretKeys.reveal()),
      ...(config.webhooks.caFile ? { ca: readFileSync(config.webhooks.caFile, "utf8") } : {}),
    },
    retention: { auditRetentionDays: config.auditRetentionDays },
    snapshots: { namespace: config.sessionsNamespace },
    images: { config: config.images, concurrency: config.importConcurrency },
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

if (import.meta.main) runMain("berth-worker", main);
