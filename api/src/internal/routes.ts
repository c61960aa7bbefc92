// The internal plane's routes (docs/dev/internal-api.md). Every report names `cluster_id`; one that is
// not the token's cluster is refused whole with 403 `forbidden` before anything is written (route.ts
// checks it for every operator route with a body).
import { clustersOf } from "../domain/clusters/runtime.ts";
import { recordActivity } from "../domain/reclaim/activity.ts";
import { applyStorageReport } from "../domain/storage/readings.ts";
import { applyInventory } from "./reportInventory.ts";
import { recordSessionStatus } from "./reportStatus.ts";
import { recordUsage } from "./reportUsage.ts";
import { type AnyInternalRoute, defineInternalRoute } from "./route.ts";
import { ActivityReport, InventoryReport, StatusReport, StorageReport, UsageBatch } from "./schemas.ts";

export const JWKS_PATH = "/.well-known/svc-internal-jwks.json";

/** Public keys only, so no token is asked for; the listener's source ranges still apply. */
export const getJwks = defineInternalRoute({
  method: "get",
  path: JWKS_PATH,
  auth: "none",
  handler: async ({ deps }) => ({
    status: 200,
    body: clustersOf(deps).tokens.jwks(),
    headers: { "Cache-Control": "public, max-age=300" },
  }),
});

export const putInventory = defineInternalRoute({
  method: "put",
  path: "/internal/v1/inventory",
  auth: "operator",
  body: InventoryReport,
  handler: async ({ deps, operator, body }) => {
    const answer = await applyInventory(deps, operator.clusterId, new Date(body.observed_at), body.nodes);
    return { status: 200, body: answer };
  },
});

export const postSessionStatus = defineInternalRoute({
  method: "post",
  path: "/internal/v1/sessions/status",
  auth: "operator",
  body: StatusReport,
  handler: async ({ deps, operator, body }) => {
    const answer = await recordSessionStatus(
      deps,
      operator.clusterId,
      body.reports.map((r) => ({ ...r, at: new Date(r.at) })),
    );
    return { status: 200, body: answer };
  },
});

export const postUsage = defineInternalRoute({
  method: "post",
  path: "/internal/v1/usage",
  auth: "operator",
  body: UsageBatch,
  handler: async ({ deps, operator, body }) => {
    const answer = await recordUsage(
      deps,
      operator.clusterId,
      body.samples.map((s) => ({ ...s, start: new Date(s.start), end: new Date(s.end) })),
    );
    return { status: 200, body: answer };
  },
});

/** What the cluster's storage driver publishes (docs/dev/storage.md): the capacity of the pools it serves. */
export const putStorage = defineInternalRoute({
  method: "put",
  path: "/internal/v1/storage",
  auth: "operator",
  body: StorageReport,
  handler: async ({ deps, operator, body }) => {
    return { status: 200, body: await applyStorageReport(deps, operator.clusterId, body) };
  },
});

/** What the gateway and the operator see of sessions' activity (docs/dev/idle-and-limits.md). */
export const postSessionActivity = defineInternalRoute({
  method: "post",
  path: "/internal/v1/sessions/activity",
  auth: "operator",
  body: ActivityReport,
  handler: async ({ deps, operator, body }) => {
    return { status: 200, body: await recordActivity(deps, operator.clusterId, body) };
  },
});

export const internalRoutes: AnyInternalRoute[] = [
  getJwks,
  putInventory,
  postSessionStatus,
  postUsage,
  putStorage,
  postSessionActivity,
];
