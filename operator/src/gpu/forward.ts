// One scrape round on to the control plane (POST /internal/v1/metrics): the GPU exporters' texts, the
// operator's own exposition and the session gateway's (read from its status port, its workers merged). The control plane stamps them with this cluster's id (from the token) and
// the sessions' labels and stores them in its metrics server, which never reaches into this cluster.
import type { MetricsForward } from "@berth/crds/internal-plane";
import type { InternalClient } from "../controlplane/client.ts";
import type { OperatorMetrics } from "../metrics.ts";

export async function forwardMetrics(
  internal: Pick<InternalClient, "call">,
  clusterId: string,
  gpuTexts: readonly string[],
  metrics: Pick<OperatorMetrics, "registry">,
  o: { gatewayUrl?: string; timeoutMs?: number } = {},
): Promise<string> {
  const [own, gateway] = await Promise.all([
    metrics.registry.metrics().catch(() => ""),
    o.gatewayUrl ? readText(o.gatewayUrl, o.timeoutMs ?? 5000) : "",
  ]);
  const r = await internal.call("POST", "/internal/v1/metrics", {
    cluster_id: clusterId,
    sources: [
      ...gpuTexts.map((text) => ({ job: "gpu-exporter", text })),
      ...(own ? [{ job: "berth-operator", text: own }] : []),
      ...(gateway ? [{ job: "gateway", text: gateway }] : []),
    ],
  } satisfies MetricsForward);
  return r.ok ? "ok" : r.status;
}

/** The text at `url`, or "" when it cannot be read in time (the round goes on without it: a gap). */
async function readText(url: string, timeoutMs: number): Promise<string> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    return r.ok ? await r.text() : "";
  } catch {
    return "";
  }
}
