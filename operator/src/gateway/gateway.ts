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
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import {
  createServer as createHttpServer,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import type { InternalClient } from "../controlplane/client.ts";
import { ActivityReporter, type ActivityTracker, FrameReader, isUserFrame, isUserRequest } from "./activity.ts";
import {
  type CookieClaims,
  CookieHeaders,
  clearCookieHeader,
  type ReadCookies,
  setCookieHeader,
  signCookie,
  verdictOn,
} from "./cookie.ts";
import { httpForwarder } from "./forward.ts";
import { carriesBody, cookieHeader, forwardedRequestHeaders, pinCookie, responseHeaders } from "./headers.ts";
import { type GatewayMetrics, statusClass } from "./metrics.ts";
import { type Page, pages, renderPage } from "./pages.ts";
import { routeOf, tokenOf, withoutToken } from "./paths.ts";
import type { Upstream, UpstreamResolver } from "./upstream.ts";
import type { ConnectVerifier, Grant, Refusal, VerifyOutcome } from "./verifier.ts";

export interface GatewayOptions {
  /** This gateway's cluster (`clu_<id>`): cookies are bound to it. */
  clusterId: string;
  verifier: ConnectVerifier;
  upstreams: UpstreamResolver;
  /** HMAC keys (≥ 32 bytes): the first signs, all verify (rotation). Default: one random key. */
  cookieKeys?: Buffer[];
  /** Cookie life; renewed (after a check with the control plane) past half of it. Default 600 s. */
  cookieTtlSeconds?: number;
  /** Serve TLS with this pair; absent = plain HTTP (behind a TLS-terminating load balancer). */
  tls?: { certPem: string; keyPem: string };
  /** Mark cookies Secure although this listener is plain HTTP (TLS terminated in front). */
  secureCookies?: boolean;
  host?: string;
  /** 0 = any free port. */
  port?: number;
  /**
   * Listen with SO_REUSEPORT: one of several processes serving the same port, the kernel spreading
   * connections among them (workers.ts). Logs "gateway worker listening" instead of the gateway's line.
   */
  reusePort?: boolean;
  /** Deadline for connecting to an upstream; then the session counts as not answering. Default 5 s. */
  upstreamConnectTimeoutMs?: number;
  clock?: { now(): number };
  log?: Logger;
  /**
   * The idle rule's traffic signal (activity.ts): requests and frames a person caused are noted per
   * session, and with `client` reported to the control plane every `intervalMs` (default 30 s).
   */
  activity?: { tracker: ActivityTracker; client?: Pick<InternalClient, "call">; intervalMs?: number };
  /** Counts what this process answered (metrics.ts; the primary merges its workers'). */
  metrics?: GatewayMetrics;
}

export interface RunningGateway {
  /** e.g. https://127.0.0.1:9443 */
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

export async function startGateway(o: GatewayOptions): Promise<RunningGateway> {
  const keys = o.cookieKeys?.length ? o.cookieKeys : [randomBytes(32)];
  if (keys.some((k) => k.length < 32)) throw new Error("gateway cookie keys must be at least 32 bytes");
  const ttl = o.cookieTtlSeconds ?? 600;
  const secure = Boolean(o.tls) || Boolean(o.secureCookies);
  const clock = o.clock ?? { now: () => Date.now() };
  const connectTimeoutMs = o.upstreamConnectTimeoutMs ?? 5000;
  const log = o.log;
  // Keep-alive, pooled connections to upstreams (forward.ts): per request the proxy costs a Map lookup
  // for the Cookie header (cookie.ts' CookieHeaders), header hygiene and two socket writes.
  const forwarder = httpForwarder({ connectTimeoutMs });
  const renewals = new Map<string, Promise<VerifyOutcome>>();
  const sockets = new Set<Duplex>();

  const nowS = (): number => Math.floor(clock.now() / 1000);
  const tracker = o.activity?.tracker;
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
  const cookieHeaders = new CookieHeaders(keys);

  function cookieFor(g: Grant): string {
    const i = nowS();
    return setCookieHeader(
      signCookie({ s: g.sessionId, c: g.crName, u: g.userId, k: o.clusterId, i, e: i + ttl }, keys[0] as Buffer),
      { cr: g.crName, maxAgeSeconds: ttl, secure },
    );
  }

  function pageOfRefusal(r: Refusal): Page {
    if (r.reason === "session_not_running") return pages.notRunning(r.phase);
    if (r.reason === "session_gone" || r.code === "not_found") return pages.gone();
    return pages.refused(r.reason, r.message);
  }

  function send(res: ServerResponse, p: Page, extra: Record<string, string | string[]> = {}): void {
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

  /** Why is there no upstream? Ask the control plane; a page either way. */
  async function explain(claims: CookieClaims): Promise<Page> {
    const out = await o.verifier.check({ cr: claims.c, sessionId: claims.s, userId: claims.u });
    if (out.kind === "refused") return pageOfRefusal(out.refusal);
    return pages.unreachable();
  }

  function renew(claims: CookieClaims): Promise<VerifyOutcome> {
    const k = `${claims.s}\u0000${claims.u}`;
    let p = renewals.get(k);
    if (!p) {
      p = o.verifier.check({ cr: claims.c, sessionId: claims.s, userId: claims.u }).finally(() => renewals.delete(k));
      renewals.set(k, p);
    }
    return p;
  }

  /** Fails the request with ETIMEDOUT when a new connection is not up within the deadline. */
  function connectDeadline(preq: ReturnType<typeof request>): void {
    preq.once("socket", (s: Socket) => {
      if (!s.connecting) return;
      const t = setTimeout(
        () => preq.destroy(Object.assign(new Error("upstream connect timeout"), { code: "ETIMEDOUT" })),
        connectTimeoutMs,
      );
      s.once("connect", () => clearTimeout(t));
      s.once("close", () => clearTimeout(t));
    });
  }

  /** Resolves the session's upstream and proxies, or answers with the page that says why there is none. */
  function proxy(
    req: IncomingMessage,
    res: ServerResponse,
    cr: string,
    claims: CookieClaims,
    cookies: ReadCookies,
    extraCookie?: string,
  ): void | Promise<void> {
    const up = o.upstreams.resolve(cr);
    // Synchronous resolvers (a table, Service DNS names) keep the common path free of promises.
    if (up instanceof Promise) return up.then((u) => proxyTo(req, res, u, cr, claims, cookies, extraCookie));
    return proxyTo(req, res, up, cr, claims, cookies, extraCookie);
  }

  function proxyTo(
    req: IncomingMessage,
    res: ServerResponse,
    up: Upstream | undefined,
    cr: string,
    claims: CookieClaims,
    cookies: ReadCookies,
    extraCookie?: string,
  ): void | Promise<void> {
    if (!up) return explain(claims).then((p) => send(res, p));
    if (tracker && isUserRequest(req.method, req.headers)) tracker.touch(claims.s, clock.now());
    const raw = req.rawHeaders;
    const timed = counted ? upstreamTimer(counted) : undefined;
    forwarder.forward(req, res, {
      upstream: up,
      cr,
      headers: forwardedRequestHeaders(raw, { remote: req.socket.remoteAddress ?? "", secure, cr, cookies }),
      body: carriesBody(raw),
      extraCookie,
      answered: timed ? (status) => timed(statusClass(status)) : undefined,
      failed(e) {
        timed?.("failed");
        log?.debug({ cr, err: e.code ?? e.message }, "upstream error");
        explain(claims).then(
          (p) => send(res, p),
          () => send(res, pages.unreachable()),
        );
      },
    });
  }

  async function redeem(req: IncomingMessage, res: ServerResponse, cr: string, token: string): Promise<void> {
    const url = req.url ?? "/";
    // Never log `url` here: it holds the token.
    const out = await o.verifier.redeem({ cr, token });
    if (out.kind === "unavailable") {
      log?.warn({ cr, why: out.why }, "connect token could not be verified");
      return send(res, pages.cannotVerify());
    }
    if (out.kind === "refused") return send(res, pageOfRefusal(out.refusal));
    if (out.grant.crName !== cr || out.grant.clusterId !== o.clusterId)
      return send(res, pages.refused("other_session", "This link was issued for another session."));
    log?.info({ cr, session: out.grant.sessionId, user: out.grant.userId }, "connect token redeemed");
    tracker?.touch(out.grant.sessionId, clock.now()); // a person followed a connect link
    res
      .writeHead(303, {
        location: withoutToken(url),
        "set-cookie": cookieFor(out.grant),
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
      })
      .end();
  }

  async function renewThenProxy(
    req: IncomingMessage,
    res: ServerResponse,
    cr: string,
    claims: CookieClaims,
    cookies: ReadCookies,
  ): Promise<void> {
    const out = await renew(claims);
    if (out.kind === "refused")
      return send(res, pageOfRefusal(out.refusal), { "set-cookie": clearCookieHeader({ cr, secure }) });
    // Unavailable: the cookie is still valid; serve, and try again on the next request.
    return proxy(req, res, cr, claims, cookies, out.kind === "grant" ? cookieFor(out.grant) : undefined);
  }

  /** A promise only when it has to wait (redemption, renewal, an asynchronous resolver, a page to explain). */
  function onRequest(req: IncomingMessage, res: ServerResponse): void | Promise<void> {
    const url = req.url ?? "/";
    const route = routeOf(url);
    if (route.kind === "health") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
      return;
    }
    if (route.kind === "unknown") return send(res, pages.notFound());
    if (route.kind === "add-slash") {
      const q = url.indexOf("?");
      res
        .writeHead(308, { location: `/proxy/${route.cr}/${q < 0 ? "" : url.slice(q)}`, "cache-control": "no-store" })
        .end();
      return;
    }
    const cr = route.cr;
    const token = tokenOf(url);
    if (token === "ambiguous") return send(res, pages.badRequest("The link carries more than one svc_cnx token."));
    if (token !== undefined) return redeem(req, res, cr, token);

    const cookies = cookieHeaders.read(cookieHeader(req.rawHeaders));
    const verdict = verdictOn(cookies, { cr, clusterId: o.clusterId, nowSeconds: nowS() });
    if (!verdict.ok)
      return send(res, { ...pages.notSignedIn(), reason: verdict.why === "expired" ? "cookie_expired" : "no_cookie" });
    if (verdict.renew) return renewThenProxy(req, res, cr, verdict.claims, cookies);
    return proxy(req, res, cr, verdict.claims, cookies);
  }

  function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
    const body = `${reason}\n`;
    socket.end(
      `HTTP/1.1 ${status} ${reasonPhrase(status)}\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nX-Berth-Gateway: ${reason}\r\nConnection: close\r\n\r\n${body}`,
    );
  }

  async function onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    const url = req.url ?? "/";
    const route = routeOf(url);
    if (route.kind !== "proxy") return refuseUpgrade(socket, 404, "not_a_session_path");
    const cr = route.cr;
    // Cross-site WebSocket hijacking: a page elsewhere must not open a socket with this user's cookie.
    const origin = req.headers.origin;
    if (origin !== undefined) {
      let host: string | undefined;
      try {
        host = new URL(origin).host;
      } catch {
        host = undefined;
      }
      if (host !== req.headers.host) return refuseUpgrade(socket, 403, "cross_origin");
    }
    const cookies = cookieHeaders.read(cookieHeader(req.rawHeaders));
    const verdict = verdictOn(cookies, { cr, clusterId: o.clusterId, nowSeconds: nowS() });
    if (!verdict.ok) return refuseUpgrade(socket, 401, verdict.why === "expired" ? "cookie_expired" : "no_cookie");
    const up = await o.upstreams.resolve(cr);
    if (!up) {
      const p = await explain(verdict.claims);
      return refuseUpgrade(socket, p.status, p.reason);
    }
    const headers = forwardedRequestHeaders(req.rawHeaders, {
      remote: req.socket.remoteAddress ?? "",
      secure,
      cr,
      cookies,
    });
    headers.push("Connection", "Upgrade", "Upgrade", req.headers.upgrade ?? "websocket");
    const timed = counted ? upstreamTimer(counted) : undefined;
    const preq = request({ host: up.host, port: up.port, method: req.method, path: url, headers, agent: false });
    connectDeadline(preq);
    preq.on("upgrade", (pres, psocket, phead) => {
      timed?.("upgraded");
      sockets.add(psocket);
      psocket.on("close", () => sockets.delete(psocket));
      psocket.on("error", () => socket.destroy());
      socket.on("close", () => psocket.destroy());
      psocket.on("close", () => socket.destroy());
      const lines = [`HTTP/1.1 101 ${pres.statusMessage || "Switching Protocols"}`];
      // Connection and Upgrade are the handshake itself here: kept. Cookies are pinned as on any answer.
      for (let i = 0; i < pres.rawHeaders.length; i += 2) {
        const name = pres.rawHeaders[i] as string;
        const value = pres.rawHeaders[i + 1] as string;
        lines.push(`${name}: ${name.toLowerCase() === "set-cookie" ? pinCookie(value, cr) : value}`);
      }
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
      if (phead.length) socket.write(phead);
      if (head.length) psocket.write(head);
      (psocket as Socket).setNoDelay(true);
      if ("setNoDelay" in socket) (socket as Socket).setNoDelay(true);
      if (tracker) {
        const session = verdict.claims.s;
        const reader = new FrameReader((opcode, payload, compressed) => {
          if (isUserFrame(url, opcode, payload, compressed)) tracker.touch(session, clock.now());
        });
        if (head.length) reader.push(head);
        socket.on("data", (chunk: Buffer) => reader.push(chunk));
      }
      psocket.pipe(socket);
      socket.pipe(psocket);
    });
    preq.on("response", (pres) => {
      timed?.(statusClass(pres.statusCode ?? 502));
      // The upstream refused the upgrade: relay its answer as it is.
      const lines = [`HTTP/1.1 ${pres.statusCode} ${pres.statusMessage}`];
      const rh = responseHeaders(pres.rawHeaders, cr);
      for (let i = 0; i < rh.length; i += 2) lines.push(`${rh[i]}: ${rh[i + 1]}`);
      lines.push("Connection: close");
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
      pres.pipe(socket);
    });
    preq.on("error", () => {
      timed?.("failed");
      if (socket.destroyed) return;
      explain(verdict.claims).then(
        (p) => refuseUpgrade(socket, p.status, p.reason),
        () => refuseUpgrade(socket, 502, "upstream_unreachable"),
      );
    });
    preq.end();
  }

  function failed(res: ServerResponse, e: unknown): void {
    log?.error({ err: (e as Error).message }, "gateway request failed");
    if (!res.headersSent)
      send(res, {
        status: 500,
        reason: "gateway_error",
        title: "Something went wrong",
        message: "The session gateway failed to handle this request.",
      });
    else res.destroy();
  }
  const counted = o.metrics;
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    if (counted) res.once("finish", () => counted.requests.inc({ code: statusClass(res.statusCode) }));
    let pending: void | Promise<void>;
    try {
      pending = onRequest(req, res);
    } catch (e) {
      failed(res, e);
      return;
    }
    if (pending instanceof Promise) pending.catch((e: unknown) => failed(res, e));
  };
  const server: Server = o.tls
    ? (createHttpsServer({ cert: o.tls.certPem, key: o.tls.keyPem }, handler) as unknown as Server)
    : createHttpServer(handler);
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    onUpgrade(req, socket, head).catch(() => socket.destroy());
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.on("secureConnection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
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

/** Starts timing a request to an upstream; the returned function records it once, under its outcome. */
function upstreamTimer(m: GatewayMetrics): (outcome: string) => void {
  const start = process.hrtime.bigint();
  let done = false;
  return (outcome) => {
    if (done) return;
    done = true;
    m.upstream.observe({ outcome }, Number(process.hrtime.bigint() - start) / 1e9);
  };
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
