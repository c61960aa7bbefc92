// POST /internal/v1/metrics: an operator forwards what it scraped in its cluster (GPU exporters, itself)
// and the API stores it in the metrics server, stamped with the token's cluster id and the sessions'
// labels (domain/monitoring/relay.ts). The metrics server is never reached from a GPU cluster.
import { MetricsForward } from "@berth/crds/internal-plane";
import { observeFaults } from "../domain/nodeFaults/observe.ts";
import { type AnyInternalRoute, defineInternalRoute } from "./route.ts";

export const postMetrics = defineInternalRoute({
  method: "post",
  path: "/internal/v1/metrics",
  auth: "operator",
  body: MetricsForward,
  handler: async ({ deps, operator, body }) => {
    // Fault counters first: the hardware-fault rule needs no metrics server (domain/nodeFaults/observe.ts).
    await observeFaults(deps, operator.clusterId, body.sources);
    return { status: 200, body: await deps.monitoring.forward(operator.clusterId, body.sources) };
  },
});

export const internalRoutes: AnyInternalRoute[] = [postMetrics];
