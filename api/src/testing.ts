// The @berth/api package's one entry for tests and benchmarks in other workspaces: the test-support
// modules and the parts of the API they drive directly (a domain function, a database operation, a loop).
// What a process runs is in "@berth/api" (api/src/index.ts).
import { fileURLToPath } from "node:url";

export { buildApp } from "./app.ts";
export { installDefaultCatalog } from "./bootstrap/catalog.ts";
export { TEST_WEBHOOK_SECRET_KEYS, testConfig } from "./config.test-support.ts";
export { createTestDatabase, type TestDatabase } from "./db/db.test-support.ts";
export type { ClusterRow } from "./db/operations/clusters/types.ts";
export { markClusterDeregistered } from "./db/operations/clusters/updateCluster.ts";
export { gpuSeconds } from "./db/operations/dashboard/gpuSeconds.ts";
export { spendByProject } from "./db/operations/dashboard/spendByProject.ts";
export { rawUsageSecondsSource, usageSecondsSource } from "./db/operations/dashboard/usageSeconds.ts";
export { deleteClusterInventory } from "./db/operations/inventory/deleteClusterInventory.ts";
export { insertUsageSamples } from "./db/operations/inventory/insertUsageSamples.ts";
export { insertTransactions } from "./db/operations/ledger/insertTransactions.ts";
export { insertSessionEvents } from "./db/operations/sessions/sessionEvents.ts";
export type { SessionRow } from "./db/operations/sessions/types.ts";
export { viewFromRow } from "./db/operations/sessions/view.ts";
export { findUserById } from "./db/operations/users/findUserById.ts";
export { insertVolume } from "./db/operations/volumes/insertVolume.ts";
export { insertEndpoint } from "./db/operations/webhooks/insertEndpoint.ts";
export { type PageParams, type PageRows, type PageWindow, selectPage } from "./db/page.ts";
export { relayTo } from "./db/relay.test-support.ts";
export { deregisterCluster } from "./domain/clusters/deregister.ts";
export { OperatorTokens } from "./domain/clusters/operatorToken.ts";
export { registerCluster } from "./domain/clusters/register.ts";
export { rotateOperatorToken } from "./domain/clusters/rotateToken.ts";
export {
  type ClustersOptions,
  type ClustersRuntime,
  clustersOf,
  createClustersRuntime,
  type HasLiveWork,
} from "./domain/clusters/runtime.ts";
export {
  generateSigningKeyPem,
  loadOrCreateSigningKey,
  SIGNING_KEY_SECRET,
  signingKeyFromPem,
} from "./domain/clusters/signingKey.ts";
export { billPendingUsage } from "./domain/credits/charge.ts";
export { CreditsContext } from "./domain/credits/context.ts";
export { grantToOrganization } from "./domain/credits/grant.ts";
export { checkLedgerInvariants } from "./domain/credits/invariants.ts";
export { billingIdle } from "./domain/credits/kick.ts";
export { transfer } from "./domain/credits/ledger.ts";
export { billStorage } from "./domain/credits/storage.ts";
export { ensureWallet } from "./domain/credits/wallets.ts";
export { type IdentityTestApi, startIdentityTestApi, type TestUser } from "./domain/identity/identity.test-support.ts";
export { DEFAULT_ARGON2, describeParams, PasswordHasher } from "./domain/identity/password.ts";
export type { Principal } from "./domain/identity/principal.ts";
export { AccessTokens } from "./domain/identity/tokens.ts";
export { type BuildOperator, installBuildsOn, startBuildOperator } from "./domain/images/buildOperator.test-support.ts";
export { copyImage } from "./domain/images/copy.ts";
export { RegistryClient } from "./domain/images/registry.ts";
export { notify } from "./domain/notifications/notify.ts";
export { planReclaim, type Reclaim } from "./domain/reclaim/plan.ts";
export { sessionEventOf } from "./domain/sessions/events.ts";
export { readSystemSettings } from "./domain/settings/settings.ts";
export { applyStorageReport } from "./domain/storage/readings.ts";
export { WebhookDispatcher } from "./domain/webhooks/dispatcher.ts";
export { newEndpointId } from "./domain/webhooks/endpoints.ts";
export { type Receiver, startReceiver } from "./domain/webhooks/receiver.test-support.ts";
export { WebhookSecretBox } from "./domain/webhooks/secretBox.ts";
export { send, TargetAgents } from "./domain/webhooks/send.ts";
export { newWebhookSecret, signatureHeaders } from "./domain/webhooks/signing.ts";
export { WebhookGuard } from "./domain/webhooks/ssrf.ts";
export { fakeAuthenticator, startTestApi, type TestApi, TestClock, testDeps } from "./http/http.test-support.ts";
export { createMetrics } from "./http/metrics.ts";
export { type InternalListener, startInternalListener } from "./internal/app.ts";
export { domainInternalRoutes } from "./internal/domains.ts";
export { applyInventory } from "./internal/reportInventory.ts";
export { BuildLoop } from "./worker/builds.ts";
export { ImportLoop } from "./worker/imports.ts";

/** The webhook dispatcher as a child process of its own (a benchmark runs several): the file to run. */
export const DISPATCHER_CHILD = fileURLToPath(
  new URL("./domain/webhooks/dispatcherChild.test-support.ts", import.meta.url),
);
