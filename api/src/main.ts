// The API process: parse configuration once, connect and migrate Postgres, build deps, run start-up
// tasks, listen; stop gracefully on SIGINT/SIGTERM. startApi() is the same start as a function, for
// e2e's `npm start` and for tests.
import { createServer, type Server } from "node:http";
import { configOrExit, runMain, type StatusServer, startStatusServer, stopOnSignals } from "@berth/controllers";
import { KubeConfig } from "@kubernetes/client-node";
import pino, { type Logger } from "pino";
import { buildApp, buildInternalApp, type InFlight } from "./app.ts";
import type { StartupTask } from "./bootstrap/task.ts";
import { buildDeps, makeClusterClients } from "./buildDeps.ts";
import { type Clock, systemClock } from "./clock.ts";
import { type Config, ConfigError, parseConfig } from "./config.ts";
import { connect, DATABASE_WAIT_MS, type Db, migrateLatest, waitForDatabase } from "./db/knex.ts";
import type { Deps } from "./deps.ts";
import { clustersOptionsFrom, createClustersRuntime } from "./domain/clusters/runtime.ts";
import { billingIdle } from "./domain/credits/kick.ts";
import { purgeExpiredIdempotencyKeys } from "./http/idempotency.ts";
import { closeServer, drain, listen, urlOf } from "./http/listen.ts";
import type { Authenticator } from "./http/principal.ts";
import type { RouteDef } from "./http/route.ts";
import { startupTasks } from "./startup.ts";

export interface StartApiOptions {
  config: Config;
  /** An open database; when given, the caller owns it (stop() leaves it open). */
  db?: Db;
  /** Apply migrations before listening (default true). */
  migrate?: boolean;
  log?: Logger;
  clock?: Clock;
  /** Defaults to the auth domain's token verification against Postgres. */
  authenticate?: Authenticator;
  /** Defaults to every route of the contract. */
  routes?: readonly RouteDef[];
  /** Defaults to startup.ts' list. */
  startupTasks?: readonly StartupTask[];
  /** How long a Postgres that does not answer yet is waited for (default 2 minutes; it may start beside us). */
  databaseWaitMs?: number;
}

export interface RunningApi {
  /** Base URL of the public listener, e.g. http://127.0.0.1:8080 */
  url: string;
  /** Base URL of the internal listener when configuration opens it. */
  internalUrl?: string;
  /** Base URL of the metrics listener (/metrics, /healthz), off the public one (docs/dev/monitoring.md). */
  metricsUrl?: string;
  deps: Deps;
  stop(): Promise<void>;
}

/** How often expired idempotency keys are deleted (lookups already treat them as absent). */
const PURGE_EVERY_MS = 10 * 60 * 1000;

const DRAIN_TIMEOUT_MS = 20_000;

export async function startApi(opts: StartApiOptions): Promise<RunningApi> {
  const { config } = opts;
  const log = opts.log ?? pino({ level: config.log.level, base: { service: "berth-api" } });
  const clock = opts.clock ?? systemClock;
  const ownDb = !opts.db;
  const db = opts.db ?? connect(config.database.url.reveal(), config.database);
  try {
    await waitForDatabase(db, { timeoutMs: opts.databaseWaitMs ?? DATABASE_WAIT_MS, log });
    if (opts.migrate !== false) {
      // A migration may rewrite a large table: on a connection of its own, with no query timeout.
      // Two connections: one holds the migrations' lock (db/knex.ts), the other runs them.
      const m = ownDb ? connect(config.database.url.reveal(), { poolMax: 2, queryTimeoutMs: 0 }) : db;
      try {
        const applied = await migrateLatest(m);
        if (applied.length > 0) log.info({ migrations: applied }, "migrations applied");
      } finally {
        if (m !== db) await m.destroy();
      }
    }
    let kubeConfig: KubeConfig | undefined;
    if (config.kube.kubeconfigPath) {
      kubeConfig = new KubeConfig();
      kubeConfig.loadFromFile(config.kube.kubeconfigPath);
    } else if (config.kube.inCluster) {
      kubeConfig = new KubeConfig();
      kubeConfig.loadFromCluster();
    }
    // Cluster registration and the internal plane need the management cluster (the signing key lives there).
    const clusterClients = kubeConfig ? makeClusterClients(kubeConfig) : undefined;
    const clusters = clusterClients
      ? await createClustersRuntime({
          clients: clusterClients,
          db,
          clock,
          log,
          options: clustersOptionsFrom(config.clusters),
        })
      : undefined;
    const deps: Deps = buildDeps(config, {
      db,
      log,
      clock,
      ...(opts.authenticate ? { authenticate: opts.authenticate } : {}),
      ...(clusterClients ? { clusterClients } : {}),
      ...(clusters ? { clusters } : {}),
    });
    for (const task of opts.startupTasks ?? startupTasks) {
      log.info({ task: task.name }, "start-up task");
      await task.run(deps);
    }

    // The Prometheus exposition discloses internals (routes, pool sizes): a listener of its own, which the
    // control plane's metrics server scrapes and nothing public reaches.
    let metricsServer: StatusServer | undefined;
    if (config.monitoring) {
      metricsServer = await startStatusServer({
        host: config.monitoring.listener.host,
        port: config.monitoring.listener.port,
        health: () => ({ ok: true }),
        registry: deps.metrics.registry,
      });
      log.info({ url: metricsServer.url }, "metrics listener");
    }

    const publicInFlight: InFlight = { count: 0 };
    const running = [publicInFlight];
    const app = buildApp(deps, { inFlight: publicInFlight, ...(opts.routes ? { routes: opts.routes } : {}) });
    const publicServer = createServer(app.callback());
    // Slow clients must not hold sockets forever; generous enough for long polls and uploads of 1 MiB.
    publicServer.requestTimeout = 60_000;
    publicServer.headersTimeout = 20_000;
    const addr = await listen(publicServer, config.api.host, config.api.port).catch(async (err: unknown) => {
      await metricsServer?.close();
      throw err;
    });
    const url = urlOf(config.api.host, addr);
    log.info({ url }, "public API listening");

    let internalServer: Server | undefined;
    let internalUrl: string | undefined;
    if (config.internal.enabled) {
      const inFlight = { count: 0 };
      running.push(inFlight);
      const internalApp = buildInternalApp(deps, { inFlight });
      internalServer = createServer(internalApp.callback());
      const iaddr = await listen(internalServer, config.internal.host, config.internal.port);
      internalUrl = urlOf(config.internal.host, iaddr);
      log.info({ url: internalUrl, allow: config.internal.allowCidrs }, "internal plane listening");
    } else {
      log.info("internal plane closed (BERTH_INTERNAL_ALLOW_CIDRS is empty)");
    }

    const purge = setInterval(() => {
      purgeExpiredIdempotencyKeys(db, clock.now()).then(
        (n) => n > 0 && log.info({ deleted: n }, "expired idempotency keys purged"),
        (err: unknown) => log.warn({ err }, "purging expired idempotency keys failed; next round retries"),
      );
    }, PURGE_EVERY_MS);
    purge.unref();

    let stopping: Promise<void> | undefined;
    return {
      url,
      ...(internalUrl ? { internalUrl } : {}),
      ...(metricsServer ? { metricsUrl: metricsServer.url } : {}),
      deps,
      stop: () => {
        stopping ??= (async () => {
          clearInterval(purge);
          // Open event streams end first (their clients reconnect elsewhere): they would hold close().
          await deps.events.close();
          await Promise.all([
            closeServer(publicServer, DRAIN_TIMEOUT_MS),
            internalServer ? closeServer(internalServer, DRAIN_TIMEOUT_MS) : Promise.resolve(),
            metricsServer?.close(),
          ]);
          // A closed socket does not stop its handler: let running handlers finish before the pool goes.
          await drain(running, DRAIN_TIMEOUT_MS, log);
          // A billing pass the last usage batches asked for (domain/credits/kick.ts) still uses the pool; one cut
          // short loses nothing (the worker's sweep charges what it left), so it gets the same deadline.
          let deadline: NodeJS.Timeout | undefined;
          await Promise.race([
            billingIdle(deps.credits),
            new Promise((r) => {
              deadline = setTimeout(r, DRAIN_TIMEOUT_MS);
            }),
          ]);
          clearTimeout(deadline);
          if (ownDb) await db.destroy();
          log.info("API stopped");
        })();
        return stopping;
      },
    };
  } catch (err) {
    if (ownDb) await db.destroy();
    throw err;
  }
}

async function main(): Promise<void> {
  const config = configOrExit(() => parseConfig(process.env), ConfigError);
  const log = pino({ level: config.log.level, base: { service: "berth-api" } });
  const api = await startApi({ config, log });
  stopOnSignals(log, () => api.stop());
}

if (import.meta.main) runMain("berth-api", main);
