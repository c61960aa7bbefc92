// POST /internal/v1/metrics: an operator forwards what it scraped in its cluster (GPU exporters, itself)
// and the API stores it in the metrics server, stamped with the token's cluster id and the sessions'
// labels (domain/monitoring/relay.ts). The metrics server is never reached from a GPU cluster.
import { z } from "zod";
import { assertOwnCluster } from "../../internal/operator-auth.ts";
import { type AnyInternalRoute, defineInternalRoute } from "../../internal/route.ts";

export const MetricsForward = z.object({
  cluster_id: z.string().min(1).max(64),
  sources: z
    .array(
      z.object({
        job: z.string().regex(/^[a-z][a-z0-9-]{0,39}$/, "a job name: lowercase letters, digits and dashes"),
        text: z.string().max(16 * 1024 * 1024),
      }),
    )
    .max(1000),
});

export const postMetrics = defineInternalRoute({
  method: "post",
  path: "/internal/v1/metrics",
  auth: "operator",
  body: MetricsForward,
  handler: async ({ deps, operator, body }) => {
    assertOwnCluster(operator, body.cluster_id);
    return { status: 200, body: await deps.monitoring.forward(operator.clusterId, body.sources) };
  },
});

export const internalRoutes: AnyInternalRoute[] = [postMetrics];
