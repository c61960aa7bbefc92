// The @berth/api package: what other workspaces run (e2e's `npm start`, the benches' processes) and the
// composition roots. Tests reach further through "@berth/api/testing" (api/src/testing.ts); cdk8s takes
// "@berth/api/rbac", the console's type generator "@berth/api/contract" and "@berth/api/openapi", and the
// tests' global setup "@berth/api/db/server" (loading the whole API there would slow every test run).

export { ensureLocalDemo } from "./bootstrap/demo.ts";
export { applyLocalSessionImages } from "./bootstrap/localImages.ts";
export { ensureDefaultPool, ensureHomeVolume, ensurePool } from "./bootstrap/storage.ts";
export { buildDeps, makeClusterClients } from "./buildDeps.ts";
export { type Config, ConfigError, parseConfig, Secret } from "./config.ts";
export { contractRoutes } from "./contract.ts";
export { connect, type Db, migrateLatest } from "./db/knex.ts";
export { freePort, type PostgresServer, startPostgres } from "./db/server.ts";
export type { Deps } from "./deps.ts";
export { markForBuilds } from "./domain/images/builds.ts";
export { parseSecretKeys } from "./domain/webhooks/secretBox.ts";
export { ERROR_CODES, type ErrorCode } from "./errors.ts";
export { type RunningApi, type StartApiOptions, startApi } from "./main.ts";
export { workerMetrics } from "./worker/metrics.ts";
export { UserImportLoop } from "./worker/userImports.ts";
export {
  capacityReclaimWorkerLoop,
  reclaimWorkerLoop,
  startWorker,
  type WebhookWorkerOptions,
  type WorkerOptions,
} from "./worker/worker.ts";
