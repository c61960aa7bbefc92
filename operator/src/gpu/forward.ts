// One GPU scrape round on to the control plane (POST /internal/v1/metrics): the exporters' texts. The
// control plane stamps them with this cluster's id (from the token) and the sessions' labels and stores
// them in its metrics server, which never reaches into this cluster. Berth's own processes (the operator,
// every gateway replica) go on their own round (forwarding/processRound.ts).
import type { MetricsForward } from "@berth/crds/internal-plane";
import type { InternalClient } from "../controlplane/client.ts";

export async function forwardMetrics(
  internal: Pick<InternalClient, "call">,
  clusterId: string,
  gpuTexts: readonly string[],
): Promise<string> {
  if (gpuTexts.length === 0) return "empty";
  const r = await internal.call("POST", "/internal/v1/metrics", {
    cluster_id: clusterId,
    sources: gpuTexts.map((text) => ({ job: "gpu-exporter", text })),
  } satisfies MetricsForward);
  return r.ok ? "ok" : r.status;
}
