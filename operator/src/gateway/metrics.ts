// The gateway's own figures. Every worker counts in its own registry; the primary asks each for its
// counters over IPC and merges them (prom-client's AggregatorRegistry.aggregate sums counters with the same
// labels), so the status port answers for the whole gateway, never for whichever worker a scrape reached.

import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { AggregatorRegistry, Counter, Registry } from "prom-client";

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
}

export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
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
