// pods/log of a session's pod on its GPU cluster, read with the cluster's registered credential, as a
// stream (follow keeps it open). kube.ts' client buffers whole answers, which a followed log never ends,
// so this is the one streaming call, with the same TLS material and the same error types.
import { request as httpRequest, type IncomingMessage } from "node:http";
import { Agent, request as httpsRequest } from "node:https";
import type { ClusterCredential } from "../../domain/clusters/credential.ts";
import { KubeStatusError, KubeTransportError, seg } from "../../domain/clusters/kube.ts";

export interface PodLogRequest {
  namespace: string;
  pod: string;
  container?: string;
  tailLines: number;
  follow: boolean;
  timestamps: boolean;
  /** Cap on the bytes the apiserver sends (non-follow answers). */
  limitBytes?: number;
  signal: AbortSignal;
  /** Until the apiserver answers; a followed log may then stay open for ever. Default 15 s. */
  connectTimeoutMs?: number;
}

export function podLogPath(r: Omit<PodLogRequest, "signal">): string {
  const q = new URLSearchParams({
    tailLines: String(r.tailLines),
    follow: String(r.follow),
    timestamps: String(r.timestamps),
  });
  if (r.container) q.set("container", r.container);
  if (r.limitBytes) q.set("limitBytes", String(r.limitBytes));
  return `/api/v1/namespaces/${seg(r.namespace)}/pods/${seg(r.pod)}/log?${q}`;
}

/** Resolves with the 200 answer as a stream; rejects with KubeStatusError or KubeTransportError. */
export function openPodLog(cred: ClusterCredential, r: PodLogRequest): Promise<IncomingMessage> {
  const base = cred.server.endsWith("/") ? cred.server : `${cred.server}/`;
  const url = new URL(podLogPath(r).replace(/^\//, ""), base);
  const https = url.protocol === "https:";
  const agent = https
    ? new Agent({
        ca: cred.caPem,
        cert: cred.clientCertPem,
        key: cred.clientKeyPem,
        servername: cred.tlsServerName,
        keepAlive: false,
      })
    : undefined;
  return new Promise((resolve, reject) => {
    const deadline = setTimeout(
      () =>
        req.destroy(new KubeTransportError("TIMEOUT", `GET ${url.host}${url.pathname}: no answer before the deadline`)),
      r.connectTimeoutMs ?? 15_000,
    );
    const options = {
      method: "GET",
      signal: r.signal,
      headers: { accept: "text/plain, */*", ...(cred.token ? { authorization: `Bearer ${cred.token}` } : {}) },
      ...(agent ? { agent } : {}),
    };
    const req = (https ? httpsRequest : httpRequest)(url, options, (res) => {
      clearTimeout(deadline);
      if (res.statusCode === 200) {
        res.on("close", () => agent?.destroy());
        resolve(res);
        return;
      }
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        agent?.destroy();
        const text = Buffer.concat(chunks).toString("utf8");
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // plain text error
        }
        reject(new KubeStatusError("GET", url.pathname, res.statusCode ?? 0, body));
      });
    });
    req.on("error", (e: NodeJS.ErrnoException) => {
      clearTimeout(deadline);
      agent?.destroy();
      if (e instanceof KubeTransportError) reject(e);
      else
        reject(
          new KubeTransportError(
            e.name === "AbortError" ? "ABORTED" : (e.code ?? "UNKNOWN"),
            `GET ${url.host}${url.pathname}: ${e.message}`,
          ),
        );
    });
    req.end();
  });
}
