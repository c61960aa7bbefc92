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
  Agent,
  createServer as createHttpServer,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  request,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import {
  COOKIE_NAME,
  type CookieClaims,
  checkCookies,
  clearCookieHeader,
  cookieValues,
  setCookieHeader,
  signCookie,
  VerifiedCookies,
  withoutCookie,
} from "./cookie.ts";
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
  /** Deadline for connecting to an upstream; then the session counts as not answering. Default 5 s. */
  upstreamConnectTimeoutMs?: number;
  clock?: { now(): number };
  log?: Logger;
}

export interface RunningGateway {
  /** e.g. https://127.0.0.1:9443 */
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

export async function startGateway(o: GatewayOptions): Promise<RunningGateway> {
  const keys = o.cookieKeys?.length ? o.cookieKeys : [randomBytes(32)];
  if (keys.some((k) => k.length < 32)) throw new Error("gateway cookie keys must be at least 32 bytes");
  const ttl = o.cookieTtlSeconds ?? 600;
  const secure = Boolean(o.tls) || Boolean(o.secureCookies);
  const clock = o.clock ?? { now: () => Date.now() };
  const connectTimeoutMs = o.upstreamConnectTimeoutMs ?? 5000;
  const log = o.log;
  // Keep-alive to upstreams: the proxy's overhead is then one HMAC and a pipe, not a TCP handshake.
  const agent = new Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64, scheduling: "lifo" });
  const renewals = new Map<string, Promise<VerifyOutcome>>();
  const sockets = new Set<Duplex>();

  const nowS = (): number => Math.floor(clock.now() / 1000);
  const verified = new VerifiedCookies();

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

  function forwardedHeaders(req: IncomingMessage, cr: string): OutgoingHttpHeaders {
    const h: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name)) continue;
      h[name] = value;
    }
    const cookie = withoutCookie(req.headers.cookie, COOKIE_NAME);
    if (cookie === undefined) delete h.cookie;
    else h.cookie = cookie;
    const remote = req.socket.remoteAddress ?? "";
    const prior = req.headers["x-forwarded-for"];
    h["x-forwarded-for"] = prior ? `${prior}, ${remote}` : remote;
    h["x-forwarded-proto"] = secure ? "https" : "http";
    if (req.headers.host) h["x-forwarded-host"] = req.headers.host;
    h["x-forwarded-prefix"] = `/proxy/${cr}`;
    return h;
  }

  /** Upstream Set-Cookie headers, with Path pinned to the session's own prefix and Domain dropped. */
  function pinCookie(v: string, cr: string): string {
    const parts = v.split(";").map((p) => p.trim());
    const prefix = `/proxy/${cr}/`;
    const kept = parts.filter((p, i) => i === 0 || !/^(path|domain)\s*=/i.test(p));
    const path = parts
      .find((p) => /^path\s*=/i.test(p))
      ?.split("=")[1]
      ?.trim();
    kept.push(`Path=${path?.startsWith(prefix) ? path : prefix}`);
    return kept.join("; ");
  }

  function responseHeaders(raw: string[], cr: string, extraCookie?: string): string[] {
    const out: string[] = [];
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i] as string;
      const lower = name.toLowerCase();
      if (HOP_BY_HOP.has(lower)) continue;
      const value = raw[i + 1] as string;
      out.push(name, lower === "set-cookie" ? pinCookie(value, cr) : value);
    }
    if (extraCookie) out.push("Set-Cookie", extraCookie);
    return out;
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

  function proxyHttp(
    req: IncomingMessage,
    res: ServerResponse,
    up: Upstream,
    cr: string,
    claims: CookieClaims,
    extraCookie?: string,
  ): void {
    const preq = request({
      host: up.host,
      port: up.port,
      method: req.method,
      path: req.url,
      headers: forwardedHeaders(req, cr),
      agent,
    });
    connectDeadline(preq);
    preq.on("response", (pres) => {
      res.writeHead(pres.statusCode ?? 502, pres.statusMessage, responseHeaders(pres.rawHeaders, cr, extraCookie));
      pres.pipe(res);
      pres.on("error", () => res.destroy());
    });
    preq.on("error", (e: NodeJS.ErrnoException) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      log?.debug({ cr, err: e.code ?? e.message }, "upstream error");
      explain(claims).then(
        (p) => send(res, p),
        () => send(res, pages.unreachable()),
      );
    });
    res.on("close", () => {
      if (!res.writableFinished) preq.destroy();
    });
    req.pipe(preq);
  }

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
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
    if (token !== undefined) {
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
      res
        .writeHead(303, {
          location: withoutToken(url),
          "set-cookie": cookieFor(out.grant),
          "cache-control": "no-store",
          "referrer-policy": "no-referrer",
        })
        .end();
      return;
    }

    const verdict = checkCookies(
      cookieValues(req.headers.cookie, COOKIE_NAME),
      keys,
      { cr, clusterId: o.clusterId, nowSeconds: nowS() },
      verified,
    );
    if (!verdict.ok)
      return send(res, { ...pages.notSignedIn(), reason: verdict.why === "expired" ? "cookie_expired" : "no_cookie" });
    let extraCookie: string | undefined;
    if (verdict.renew) {
      const out = await renew(verdict.claims);
      if (out.kind === "refused")
        return send(res, pageOfRefusal(out.refusal), { "set-cookie": clearCookieHeader({ cr, secure }) });
      // Unavailable: the cookie is still valid; serve, and try again on the next request.
      if (out.kind === "grant") extraCookie = cookieFor(out.grant);
    }
    const up = await o.upstreams.resolve(cr);
    if (!up) return send(res, await explain(verdict.claims));
    proxyHttp(req, res, up, cr, verdict.claims, extraCookie);
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
    const verdict = checkCookies(
      cookieValues(req.headers.cookie, COOKIE_NAME),
      keys,
      { cr, clusterId: o.clusterId, nowSeconds: nowS() },
      verified,
    );
    if (!verdict.ok) return refuseUpgrade(socket, 401, verdict.why === "expired" ? "cookie_expired" : "no_cookie");
    const up = await o.upstreams.resolve(cr);
    if (!up) {
      const p = await explain(verdict.claims);
      return refuseUpgrade(socket, p.status, p.reason);
    }
    const headers = forwardedHeaders(req, cr);
    headers.connection = "Upgrade";
    headers.upgrade = req.headers.upgrade ?? "websocket";
    const preq = request({ host: up.host, port: up.port, method: req.method, path: url, headers, agent: false });
    connectDeadline(preq);
    preq.on("upgrade", (pres, psocket, phead) => {
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
      psocket.pipe(socket);
      socket.pipe(psocket);
    });
    preq.on("response", (pres) => {
      // The upstream refused the upgrade: relay its answer as it is.
      const lines = [`HTTP/1.1 ${pres.statusCode} ${pres.statusMessage}`];
      const rh = responseHeaders(pres.rawHeaders, cr);
      for (let i = 0; i < rh.length; i += 2) lines.push(`${rh[i]}: ${rh[i + 1]}`);
      lines.push("Connection: close");
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
      pres.pipe(socket);
    });
    preq.on("error", () => {
      if (socket.destroyed) return;
      explain(verdict.claims).then(
        (p) => refuseUpgrade(socket, p.status, p.reason),
        () => refuseUpgrade(socket, 502, "upstream_unreachable"),
      );
    });
    preq.end();
  }

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    onRequest(req, res).catch((e: unknown) => {
      log?.error({ err: (e as Error).message }, "gateway request failed");
      if (!res.headersSent)
        send(res, {
          status: 500,
          reason: "gateway_error",
          title: "Something went wrong",
          message: "The session gateway failed to handle this request.",
        });
      else res.destroy();
    });
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
  server.listen(o.port ?? 0, o.host ?? "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  const host = o.host && o.host !== "0.0.0.0" ? o.host : "127.0.0.1";
  const url = `${o.tls ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${port}`;
  log?.info({ url, clusterId: o.clusterId, tls: Boolean(o.tls) }, "session gateway listening");
  return {
    url,
    port,
    server,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      server.closeAllConnections?.();
      agent.destroy();
      await closed;
    },
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
