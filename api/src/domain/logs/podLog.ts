// pods/log of a session's pod on its GPU cluster, read with the cluster's registered credential, as a
// stream (follow keeps it open): the one client's streamed read, with its error types.
import type { IncomingMessage } from "node:http";
import { type HttpKube, seg } from "@berth/controllers/kube";

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

/**
 * Resolves with the 200 answer as a stream (on a connection of its own, so the cluster's kept client is
 * not held); rejects with KubeError or KubeTransportError.
 */
export function openPodLog(kube: Pick<HttpKube, "stream">, r: PodLogRequest): Promise<IncomingMessage> {
  return kube.stream(podLogPath(r), {
    signal: r.signal,
    ...(r.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: r.connectTimeoutMs }),
  });
}
