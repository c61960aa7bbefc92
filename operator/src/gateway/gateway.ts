// The per-cluster session gateway: serves /proxy/{cr}/… at the cluster's session domain.
//
//   first request, ?svc_cnx=<token>  -> the control plane redeems the token (once) -> cookie + 303 to the
//                                       same URL without the token
//   later requests, cookie           -> checked here (HMAC, see cookie.ts) -> HTTP or WebSocket proxied to
//                                       the session's upstream
//   control plane unreachable        -> 401 page (the contract), never a hang (every wait has a deadline)
//   session paused or gone           -> a page that says so
//
// The session's code is untrusted: it never sees the gateway cookie, and cookies it sets are pinned to
// its own /proxy/{cr}/ path so it cannot plant cookies for other sessions on the shared host.
//
// Wired here from its parts (options.ts holds what it takes):
//   - plan.ts: what a request or an upgrade asks for, decided from its URL and headers (pure);
//   - grants.ts: the control plane's word on a session, and the cookie that carries it;
//   - http-proxy.ts: a request redeemed, checked and forwarded (forward.ts), or answered with a page;
//   - websocket-proxy.ts: an upgrade checked and piped to the session;
//   - answers.ts: the pages and refusals the gateway writes itself;
//   - activity.ts: the person's use of each session, reported to the control plane on a periodic pass.
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { ActivityReporter } from "./activity.ts";
import { sendFailure } from "./answers.ts";
import { CookieHeaders } from "./cookie.ts";
import { httpForwarder } from "./forward.ts";
import { SessionGrants } from "./grants.ts";
import { HttpProxy } from "./http-proxy.ts";
import { statusClass } from "./metrics.ts";
import {
  DEFAULT_COOKIE_TTL_SECONDS,
  DEFAULT_UPSTREAM_CONNECT_TIMEOUT_MS,
  type GatewayOptions,
  type RunningGateway,
} from "./options.ts";
import { WebSocketProxy } from "./websocket-proxy.ts";

export type { GatewayOptions, RunningGateway } from "./options.ts";

export async function startGateway(o: GatewayOptions): Promise<RunningGateway> {
  const keys = o.cookieKeys?.length ? o.cookieKeys : [randomBytes(32)];
  if (keys.some((k) => k.length < 32)) throw new Error("gateway cookie keys must be at least 32 bytes");
  const secure = Boolean(o.tls) || Boolean(o.secureCookies);
  const clock = o.clock ?? { now: () => Date.now() };
  const nowSeconds = (): number => Math.floor(clock.now() / 1000);
  const connectTimeoutMs = o.upstreamConnectTimeoutMs ?? DEFAULT_UPSTREAM_CONNECT_TIMEOUT_MS;
  const { log, metrics } = o;
  const tracker = o.activity?.tracker;
  // Keep-alive, pooled connections to upstreams (forward.ts): per request the proxy costs a Map lookup
  // for the Cookie header (cookie.ts' CookieHeaders), header hygiene and two socket writes.
  const forwarder = httpForwarder({ connectTimeoutMs });
  const cookies = new CookieHeaders(keys);
  const grants = new SessionGrants({
    clusterId: o.clusterId,
    verifier: o.verifier,
    keys,
    ttlSeconds: o.cookieTtlSeconds ?? DEFAULT_COOKIE_TTL_SECONDS,
    secure,
    nowSeconds,
  });
  const common = { clusterId: o.clusterId, grants, cookies, upstreams: o.upstreams, secure, clock, nowSeconds };
  const http = new HttpProxy({ ...common, forwarder, tracker, metrics, log });
  const sockets = new Set<Duplex>();
  const track = (s: Duplex): void => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  };
  const websockets = new WebSocketProxy({ ...common, connectTimeoutMs, track, tracker, metrics });
  const reporter =
    o.activity?.client !== undefined
      ? new ActivityReporter({
          clusterId: o.clusterId,
          client: o.activity.client,
          tracker: o.activity.tracker,
          clock,
          ...(o.activity.intervalMs ? { intervalMs: o.activity.intervalMs } : {}),
          onReport: (ok, message) => {
            if (!ok) log?.warn({ err: message }, "activity report failed; retried with the next");
          },
        })
      : undefined;

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    if (metrics) res.once("finish", () => metrics.requests.inc({ code: statusClass(res.statusCode) }));
    let pending: void | Promise<void>;
    try {
      pending = http.serve(req, res);
    } catch (e) {
      sendFailure(res, e, log);
      return;
    }
    if (pending instanceof Promise) pending.catch((e: unknown) => sendFailure(res, e, log));
  };
  const server: Server = o.tls
    ? (createHttpsServer({ cert: o.tls.certPem, key: o.tls.keyPem }, handler) as unknown as Server)
    : createHttpServer(handler);
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    websockets.upgrade(req, socket, head).catch(() => socket.destroy());
  });
  server.on("connection", (s: Socket) => track(s));
  server.on("secureConnection", (s: Socket) => track(s));
  server.listen({ port: o.port ?? 0, host: o.host ?? "127.0.0.1", ...(o.reusePort ? { reusePort: true } : {}) });
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  const host = o.host && o.host !== "0.0.0.0" ? o.host : "127.0.0.1";
  const url = `${o.tls ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${port}`;
  reporter?.start();
  log?.info(
    { url, clusterId: o.clusterId, tls: Boolean(o.tls) },
    o.reusePort ? "gateway worker listening" : "session gateway listening",
  );
  return {
    url,
    port,
    server,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      server.closeAllConnections?.();
      await Promise.all([closed, forwarder.close(), o.upstreams.close?.()]);
      // The last news goes out before the process ends (a restarted gateway starts with none).
      await reporter?.stop();
      if (reporter) await reporter.report();
    },
  };
}
