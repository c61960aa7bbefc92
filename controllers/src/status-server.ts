// A controller process's own listener (the operator's, the worker's): /healthz for probes, /metrics for
// Prometheus; and what its owner adds (the operator's GET /routes for the session gateway).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What the server needs of a prom-client Registry. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

export interface Health {
  ok: boolean;
  [k: string]: unknown;
}

export interface StatusServer {
  url: string;
  close(): Promise<void>;
}

export async function startStatusServer(opts: {
  host: string;
  port: number;
  health: () => Health;
  registry: MetricsSource;
  /** More GET paths: answers and returns true when it serves `path`. */
  handle?: (path: string, req: IncomingMessage, res: ServerResponse) => boolean;
}): Promise<StatusServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    if (path === "/healthz") {
      const h = opts.health();
      res.writeHead(h.ok ? 200 : 503, { "content-type": "application/json" }).end(JSON.stringify(h));
      return;
    }
    if (path === "/metrics") {
      opts.registry.metrics().then(
        (text) => res.writeHead(200, { "content-type": opts.registry.contentType }).end(text),
        (e: Error) => res.writeHead(500, { "content-type": "text/plain" }).end(e.message),
      );
      return;
    }
    if (path !== undefined && opts.handle?.(path, req, res)) return;
    res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = opts.host === "0.0.0.0" || opts.host === "::" ? "127.0.0.1" : opts.host;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
