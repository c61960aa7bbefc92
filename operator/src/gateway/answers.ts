// What the gateway answers itself, when it does not proxy: a page on an HTTP request, a short plain
// answer on a refused WebSocket upgrade (its socket is raw: no ServerResponse to write on).
import type { ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { type Page, renderPage } from "./pages.ts";

export function sendPage(res: ServerResponse, p: Page, extra: Record<string, string | string[]> = {}): void {
  const body = renderPage(p);
  res.writeHead(p.status, {
    "content-type": "text/html; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "x-berth-gateway": p.reason,
    ...extra,
  });
  res.end(body);
}

/** A request that threw: a page when nothing was sent yet, else the connection is cut. */
export function sendFailure(res: ServerResponse, e: unknown, log: Logger | undefined): void {
  log?.error({ err: (e as Error).message }, "gateway request failed");
  if (!res.headersSent)
    sendPage(res, {
      status: 500,
      reason: "gateway_error",
      title: "Something went wrong",
      message: "The session gateway failed to handle this request.",
    });
  else res.destroy();
}

export function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  const body = `${reason}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${reasonPhrase(status)}\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nX-Berth-Gateway: ${reason}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function reasonPhrase(status: number): string {
  return (
    (
      { 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 409: "Conflict", 502: "Bad Gateway" } as Record<
        number,
        string
      >
    )[status] ?? "Error"
  );
}
