// "Does this session's pod run?" asked of the GPU cluster's Kubernetes API (GET pods/{cr} in the sessions
// namespace): the gate of gatedUpstreams for the local fleet. Needs `get pods` in that namespace.
import { type RoutablePod, routeOfPod } from "@berth/controllers";
import { HttpKube, seg } from "@berth/controllers/kube";
import type { UpstreamResolver } from "./upstream.ts";

export interface PodGateOptions {
  /** https://host:port of the cluster's apiserver */
  server: string;
  caPem?: string;
  token: string;
  namespace: string;
  timeoutMs?: number;
}

export function kubePodRunning(o: PodGateOptions): (cr: string) => Promise<boolean> {
  const kube = new HttpKube(
    { server: o.server, token: o.token, ...(o.caPem ? { caPem: o.caPem } : {}) },
    { maxSockets: 8, userAgent: "berth-gateway" },
  );
  return async (cr) => {
    try {
      const res = await kube.request<{ metadata?: { deletionTimestamp?: string }; status?: { phase?: string } }>(
        "GET",
        `/api/v1/namespaces/${seg(o.namespace)}/pods/${seg(cr)}`,
        { timeoutMs: o.timeoutMs ?? 3000 },
      );
      // Any other answer, or none, is "not running": the gate answers the page, never an error.
      if (res.status !== 200 || typeof res.body !== "object" || res.body === null) return false;
      return res.body.status?.phase === "Running" && !res.body.metadata?.deletionTimestamp;
    } catch {
      return false;
    }
  };
}

export interface PodRouteOptions extends PodGateOptions {
  /** Pods whose address this admits are dialled at that address (e.g. `addressMatcher` of pod ranges). */
  direct: (host: string) => boolean;
  /** Where every other running session pod's traffic goes (the local fleet's stand-in). */
  fallback: UpstreamResolver;
  /** How long one answer of the cluster's API is used; default 2 s. */
  ttlMs?: number;
  now?: () => number;
}

/**
 * For a fleet where some pods really run (the bed's real node) and others are kwok's: a running session pod
 * whose address `direct` admits is reached at its own address and `http` port, once Ready
 * (controllers/src/mirror/routes.ts, as the operator's table has it); any other running pod's traffic goes
 * to `fallback`; a pod not running gets none (the gateway's page). One GET per session and `ttlMs`.
 */
export function kubePodUpstreams(o: PodRouteOptions): UpstreamResolver {
  const kube = new HttpKube(
    { server: o.server, token: o.token, ...(o.caPem ? { caPem: o.caPem } : {}) },
    { maxSockets: 8, userAgent: "berth-gateway" },
  );
  const ttl = o.ttlMs ?? 2000;
  const now = o.now ?? Date.now;
  const cache = new Map<string, { pod: RoutablePod | undefined; at: number }>();
  const read = async (cr: string): Promise<RoutablePod | undefined> => {
    const hit = cache.get(cr);
    if (hit && now() - hit.at < ttl) return hit.pod;
    let pod: RoutablePod | undefined;
    try {
      const res = await kube.request<RoutablePod>("GET", `/api/v1/namespaces/${seg(o.namespace)}/pods/${seg(cr)}`, {
        timeoutMs: o.timeoutMs ?? 3000,
      });
      pod = res.status === 200 && typeof res.body === "object" && res.body !== null ? res.body : undefined;
    } catch {
      pod = undefined;
    }
    if (cache.size > 10_000) cache.clear();
    cache.set(cr, { pod, at: now() });
    return pod;
  };
  return {
    async resolve(cr) {
      const pod = await read(cr);
      if (pod?.status?.phase !== "Running" || pod.metadata.deletionTimestamp) return undefined;
      if (pod.status.podIP && o.direct(pod.status.podIP)) return routeOfPod(pod);
      return o.fallback.resolve(cr);
    },
    async close() {
      kube.close();
    },
  };
}
