// One scrape round on to the control plane (POST /internal/v1/metrics): the GPU exporters' texts and the
// operator's own exposition. The control plane stamps them with this cluster's id (from the token) and
// the sessions' labels and stores them in its metrics server, which never reaches into this cluster.
import type { MetricsForward } from "@berth/crds/internal-plane";
import type { InternalClient } from "../controlplane/client.ts";
import type { OperatorMetrics } from "../metrics.ts";

export async function forwardMetrics(
  internal: Pick<InternalClient, "call">,
  clusterId: string,
  gpuTexts: readonly string[],
  metrics: Pick<OperatorMetrics, "registry">,
): Promise<string> {
  const own = await metrics.registry.metrics().catch(() => "");
  const r = await internal.call("POST", "/internal/v1/metrics", {
    cluster_id: clusterId,
    sources: [
      ...gpuTexts.map((text) => ({ job: "gpu-exporter", text })),
      ...(own ? [{ job: "berth-operator", text: own }] : []),
    ],
  } satisfies MetricsForward);
  return r.ok ? "ok" : r.status;
}
