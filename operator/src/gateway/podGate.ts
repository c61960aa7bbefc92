// "Does this session's pod run?" asked of the GPU cluster's Kubernetes API (GET pods/{cr} in the sessions
// namespace): the gate of gatedUpstreams for the local fleet. Needs `get pods` in that namespace.
import { HttpKube, seg } from "@berth/controllers/kube";

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
