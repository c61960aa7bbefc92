// Forwarding one HTTP request to a session's upstream and its answer back, over pooled keep-alive
// connections (undici's Agent: one pool per upstream origin, idle pools closed by undici).
//
// Why undici and not node:http's request(): profiled under load (bench/src/gateway-throughput.ts with
// --cpu-prof), node:http's client side (ClientRequest, its Agent bookkeeping, header objects validated one
// by one, stream plumbing) made a plain node:http -> node:http proxy cost ~160 µs of CPU per request on the
// bench machine; the same proxy with undici's dispatcher cost ~85 µs. What remains is mostly the two
// socket writes per request (loopback TCP delivers to the receiver inside the sender's syscall).
//
// WebSocket upgrades do not come here: they are rare, long-lived and piped by gateway.ts.
import type { IncomingMessage, ServerResponse } from "node:http";
import { Agent, type Dispatcher } from "undici";
import { responseHeaders } from "./headers.ts";
import type { Upstream } from "./upstream.ts";

export interface ForwarderOptions {
  /** Deadline for opening a new connection to an upstream. */
  connectTimeoutMs: number;
  /** Connections kept per upstream (host:port); requests beyond wait for one. Default 256. */
  connectionsPerUpstream?: number;
}

export interface Forward {
  upstream: Upstream;
  cr: string;
  /** Request headers to send (headers.ts' forwardedRequestHeaders). */
  headers: string[];
  /** Whether the request carries a body (Content-Length or Transfer-Encoding). */
  body: boolean;
  /** A renewed gateway cookie to add to the answer. */
  extraCookie?: string | undefined;
  /** The upstream failed before its answer started: the caller answers with a page. */
  failed(e: Error & { code?: string }): void;
  /** The upstream's answer started with this status (before its headers are written on). */
  answered?: ((status: number) => void) | undefined;
}

export interface Forwarder {
  forward(req: IncomingMessage, res: ServerResponse, f: Forward): void;
  close(): Promise<void>;
}

export function httpForwarder(o: ForwarderOptions): Forwarder {
  const agent = new Agent({
    connections: o.connectionsPerUpstream ?? 256,
    pipelining: 1,
    allowH2: false,
    connectTimeout: o.connectTimeoutMs,
    // No deadline on an answer once connected, as before: notebooks long-poll and stream large files.
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const origins = new Map<string, string>();
  const originOf = (u: Upstream): string => {
    const key = `${u.host}:${u.port}`;
    let origin = origins.get(key);
    if (origin === undefined) {
      origin = `http://${u.host.includes(":") ? `[${u.host}]` : u.host}:${u.port}`;
      if (origins.size > 10_000) origins.clear();
      origins.set(key, origin);
    }
    return origin;
  };
  return {
    forward(req, res, f) {
      agent.dispatch(
        {
          origin: originOf(f.upstream),
          path: req.url ?? "/",
          method: (req.method ?? "GET") as Dispatcher.HttpMethod,
          headers: f.headers,
          body: f.body ? req : null,
        },
        new ForwardHandler(res, f),
      );
    },
    close: () => agent.destroy(),
  };
}

class ForwardHandler implements Dispatcher.DispatchHandler {
  readonly #res: ServerResponse;
  readonly #f: Forward;
  #controller: Dispatcher.DispatchController | undefined;
  #gone = false;
  constructor(res: ServerResponse, f: Forward) {
    this.#res = res;
    this.#f = f;
    // The browser went away: stop asking the upstream (its connection is not reused half-read).
    res.on("close", () => {
      if (res.writableFinished) return;
      this.#gone = true;
      this.#controller?.abort(new Error("client closed the connection"));
    });
  }
  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#gone) controller.abort(new Error("client closed the connection"));
  }
  onResponseStart(controller: Dispatcher.DispatchController, status: number, _h: unknown, message?: string): void {
    this.#f.answered?.(status);
    const raw = (controller.rawHeaders ?? []) as Array<string | Buffer>;
    const headers = responseHeaders(raw, this.#f.cr, this.#f.extraCookie);
    try {
      this.#res.writeHead(status, message, headers);
    } catch {
      // A status line node:http will not write (odd characters in the reason phrase): without it.
      this.#res.writeHead(status, headers);
    }
  }
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#res.write(chunk)) return;
    controller.pause();
    this.#res.once("drain", () => controller.resume());
  }
  onResponseEnd(): void {
    this.#res.end();
  }
  onResponseError(_controller: Dispatcher.DispatchController | null, e: Error): void {
    if (this.#gone) return;
    if (this.#res.headersSent) this.#res.destroy();
    else this.#f.failed(e as Error & { code?: string });
  }
}
