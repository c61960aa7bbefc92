// The gateway's own figures. Every worker counts in its own registry; the primary asks each for its
// figures over IPC and merges them (prom-client's AggregatorRegistry.aggregate sums counters, and a
// histogram's buckets, sum and count, with the same labels), so the status port answers for the whole
// gateway, never for whichever worker a scrape reached.

import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { AggregatorRegistry, Counter, Histogram, Registry } from "prom-client";

/** One process's counters as registry.getMetricsAsJSON() gives them (plain data, sent over IPC). */
export type MetricsJson = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>;

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: "berth_gateway_requests_total",
    help: "HTTP requests and WebSocket upgrades the session gateway answered, by status class.",
    labelNames: ["code"] as const,
    registers: [this.registry],
  });
  /**
   * Time from handing a request to the session's upstream to the upstream's answer starting (its status
   * line): what the upstream and the path to it cost, not how long a download or a long poll lasts. By
   * outcome: the answer's status class, `upgraded` (a WebSocket's 101), or `failed` (no answer: refused,
   * reset, connect timeout).
   */
  readonly upstream = new Histogram({
    name: "berth_gateway_upstream_duration_seconds",
    help: "Time from forwarding a request to a session's upstream until its answer starts, by outcome (status class, upgraded, failed).",
    labelNames: ["outcome"] as const,
    buckets: UPSTREAM_BUCKETS,
    registers: [this.registry],
  });
}

/** Seconds: 1 ms (a local app) … 30 s (a kernel busy starting). */
export const UPSTREAM_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

/** Starts timing a request to an upstream; the returned function records it once, under its outcome. */
export function upstreamTimer(m: GatewayMetrics): (outcome: string) => void {
  const start = process.hrtime.bigint();
  let done = false;
  return (outcome) => {
    if (done) return;
    done = true;
    m.upstream.observe({ outcome }, Number(process.hrtime.bigint() - start) / 1e9);
  };
}

/** The merged exposition of several processes' counters (each from registry.getMetricsAsJSON()). */
export async function mergeMetrics(parts: readonly MetricsJson[]): Promise<string> {
  return AggregatorRegistry.aggregate([...parts]).metrics();
}

/** GET /metrics on `port`: the text `read` gives. Listens on `host` (all interfaces in a pod). */
export async function startStatusServer(
  read: () => Promise<string>,
  o: { host: string; port: number },
): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    read().then(
      (text) => res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(text),
      (e: unknown) => res.writeHead(503, { "content-type": "text/plain" }).end(`${(e as Error).message}\n`),
    );
  });
  server.listen({ port: o.port, host: o.host });
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const host = o.host.includes(":") ? `[${o.host}]` : o.host === "0.0.0.0" ? "127.0.0.1" : o.host;
  return {
    url: `http://${host}:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
