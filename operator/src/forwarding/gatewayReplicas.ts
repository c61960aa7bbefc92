// The session gateway's replicas as the operator finds them: its pods (by label, in its namespace), each
// scraped on its own status port. A Service in front of them would reach one replica per scrape, and the
// figures of the others would be missing from that round (docs/dev/monitoring.md).
import type { KubeApi } from "@berth/controllers/kube";

export interface GatewayPods {
  namespace: string;
  /** A label selector, e.g. app.kubernetes.io/name=berth-gateway. */
  selector: string;
  /** The status port: a container port's name, or its number. */
  port: string | number;
}

export interface GatewayTarget {
  /** The pod's name: the `instance` label of its figures. */
  instance: string;
  url: string;
}

interface PodItem {
  metadata?: { name?: string };
  spec?: { containers?: { ports?: { name?: string; containerPort?: number }[] }[] };
  status?: { phase?: string; podIP?: string };
}

/** Running pods with an address and the status port; the rest (pending, finished, no such port) are left out. */
export function gatewayTargets(pods: readonly PodItem[], port: string | number): GatewayTarget[] {
  const out: GatewayTarget[] = [];
  for (const p of pods) {
    const name = p.metadata?.name;
    const ip = p.status?.podIP;
    if (!name || !ip || p.status?.phase !== "Running") continue;
    const number =
      typeof port === "number"
        ? port
        : p.spec?.containers?.flatMap((c) => c.ports ?? []).find((x) => x.name === port)?.containerPort;
    if (!number) continue;
    out.push({ instance: name, url: `http://${ip.includes(":") ? `[${ip}]` : ip}:${number}/metrics` });
  }
  return out.sort((a, b) => a.instance.localeCompare(b.instance));
}

/** The replicas now: one list of the gateway's pods (a round every 15 s costs one small list). */
export async function findGatewayReplicas(kube: Pick<KubeApi, "json">, g: GatewayPods): Promise<GatewayTarget[]> {
  const list = await kube.json<{ items: PodItem[] }>(
    "GET",
    `/api/v1/namespaces/${encodeURIComponent(g.namespace)}/pods`,
    {
      query: { labelSelector: g.selector },
    },
  );
  return gatewayTargets(list.items, g.port);
}
