// GET /api/v1/dashboard: summaries from Berth's own inventory and ledger (domain/dashboard/summary.ts).
// It never reads the metrics server, so it renders while that is down.
import { dashboardOf } from "../../domain/dashboard/summary.ts";
import { poolViews } from "../../domain/storage/pools.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentDashboard } from "./presenter.ts";
import { Dashboard, DashboardQuery } from "./schemas.ts";

export const getDashboard = defineRoute({
  method: "get",
  path: "/api/v1/dashboard",
  operationId: "getDashboard",
  tags: ["monitoring"],
  summary: "The caller's dashboard: their sessions and credits; for administrators, what they administer",
  description:
    "`me` is every caller's own: running and paused sessions, GPU-hours and credits this calendar month (UTC), the balance of their own wallets and the days it lasts at the rate of their running sessions. `admin` is null for members; organization and project admins get sessions by phase, the queue and spend by organization and project of what they administer; super_admins also get GPUs by cluster and model (total, allocated, free, allocated-but-idle), nodes cordoned or not ready, and the storage tile (the largest pool, never the sum; with `cluster`, still fleet-wide and marked shared_across_clusters).",
  auth: "user",
  query: DashboardQuery,
  responses: { 200: Dashboard },
  handler: async ({ deps, principal, query }) => {
    const summary = await dashboardOf({
      db: deps.db,
      principal,
      now: deps.clock.now(),
      clusterId: query.cluster,
      pools: async () => (deps.storage ? poolViews(deps) : undefined),
    });
    return { status: 200 as const, body: presentDashboard(summary) };
  },
});

export const routes: RouteDef[] = [getDashboard];
