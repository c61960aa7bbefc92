// "Does this session's pod run?" asked of the GPU cluster's Kubernetes API (GET pods/{cr} in the sessions
// namespace): the gate of gatedUpstreams for the local fleet. Needs `get pods` in that namespace.
import { request } from "node:https";

export interface PodGateOptions {
  /** https://host:port of the cluster's apiserver */
  server: string;
  caPem?: string;
  token: string;
  namespace: string;
  timeoutMs?: number;
}

export function kubePodRunning(o: PodGateOptions): (cr: string) => Promise<boolean> {
  const base = o.server.replace(/\/+$/, "");
  return (cr) =>
    new Promise((resolve) => {
      const url = new URL(
        `${base}/api/v1/namespaces/${encodeURIComponent(o.namespace)}/pods/${encodeURIComponent(cr)}`,
      );
      const req = request(
        url,
        {
          headers: { authorization: `Bearer ${o.token}`, accept: "application/json" },
          ...(o.caPem ? { ca: o.caPem } : {}),
          timeout: o.timeoutMs ?? 3000,
        },
        (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => (body += c));
          res.on("end", () => {
            if (res.statusCode !== 200) return resolve(false);
            try {
              const pod = JSON.parse(body) as {
                metadata?: { deletionTimestamp?: string };
                status?: { phase?: string };
              };
              resolve(pod.status?.phase === "Running" && !pod.metadata?.deletionTimestamp);
            } catch {
              resolve(false);
            }
          });
        },
      );
      req.on("timeout", () => req.destroy());
      req.on("error", () => resolve(false));
      req.end();
    });
}
