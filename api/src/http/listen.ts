// The API's listeners: open one, name its URL, close it, and wait for the handlers still running.
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { InFlight } from "../app.ts";

export function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Stops listening and resolves once every connection is gone. Keep-alive connections with no request in
 * flight would hold close() open: they go at once. In-flight requests get `graceMs` to finish; then their
 * connections are cut too, since a stream that never ends by itself (a followed pod log, a build's log
 * while it runs) held close() and the whole stop for ever.
 */
export function closeServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(cut);
      resolve();
    });
    server.closeIdleConnections();
  });
}

export async function drain(apps: InFlight[], timeoutMs: number, log: Logger): Promise<void> {
  const running = () => apps.reduce((n, a) => n + a.count, 0);
  const deadline = Date.now() + timeoutMs;
  while (running() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  if (running() > 0) log.warn({ running: running() }, "requests still running at shutdown");
}

export function urlOf(host: string, addr: AddressInfo): string {
  const h =
    host === "0.0.0.0" || host === "::" ? "127.0.0.1" : addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  return `http://${h}:${addr.port}`;
}
