// The gateway's WebSocket side: an upgrade checked as a request is (same-origin, a valid cookie; no
// renewal, no connect link), then the two sockets piped together. Frames a person sent count as use
// (activity.ts' FrameReader). Rare and long-lived, so plain node:http, one connection per socket.
import { type IncomingMessage, request } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { type ActivityTracker, FrameReader, isUserFrame } from "./activity.ts";
import { refuseUpgrade } from "./answers.ts";
import { type CookieHeaders, verdictOn } from "./cookie.ts";
import type { SessionGrants } from "./grants.ts";
import { cookieHeader, forwardedRequestHeaders, pinCookie, responseHeaders } from "./headers.ts";
import { type GatewayMetrics, statusClass, upstreamTimer } from "./metrics.ts";
import { planUpgrade, signedOutReason } from "./plan.ts";
import type { UpstreamResolver } from "./upstream.ts";

export interface WebSocketProxyDeps {
  clusterId: string;
  grants: SessionGrants;
  cookies: CookieHeaders;
  upstreams: UpstreamResolver;
  connectTimeoutMs: number;
  secure: boolean;
  clock: { now(): number };
  nowSeconds(): number;
  /** Keeps the socket among those the gateway's close destroys. */
  track(socket: Duplex): void;
  tracker?: ActivityTracker | undefined;
  metrics?: GatewayMetrics | undefined;
}

export class WebSocketProxy {
  readonly #d: WebSocketProxyDeps;

  constructor(d: WebSocketProxyDeps) {
    this.#d = d;
  }

  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const { grants, secure, metrics } = this.#d;
    this.#d.track(socket);
    socket.on("error", () => socket.destroy());
    const url = req.url ?? "/";
    const plan = planUpgrade(url, req.headers.origin, req.headers.host);
    if (plan.kind === "refuse") return refuseUpgrade(socket, plan.status, plan.reason);
    const cr = plan.cr;
    const cookies = this.#d.cookies.read(cookieHeader(req.rawHeaders));
    const verdict = verdictOn(cookies, { cr, clusterId: this.#d.clusterId, nowSeconds: this.#d.nowSeconds() });
    if (!verdict.ok) return refuseUpgrade(socket, 401, signedOutReason(verdict));
    const up = await this.#d.upstreams.resolve(cr);
    if (!up) {
      const p = await grants.explain(verdict.claims);
      return refuseUpgrade(socket, p.status, p.reason);
    }
    const headers = forwardedRequestHeaders(req.rawHeaders, {
      remote: req.socket.remoteAddress ?? "",
      secure,
      cr,
      cookies,
    });
    headers.push("Connection", "Upgrade", "Upgrade", req.headers.upgrade ?? "websocket");
    const timed = metrics ? upstreamTimer(metrics) : undefined;
    const preq = request({ host: up.host, port: up.port, method: req.method, path: url, headers, agent: false });
    this.#connectDeadline(preq);
    preq.on("upgrade", (pres, psocket, phead) => {
      timed?.("upgraded");
      this.#d.track(psocket);
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
      this.#followFrames(socket, head, url, verdict.claims.s);
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
      grants.explain(verdict.claims).then(
        (p) => refuseUpgrade(socket, p.status, p.reason),
        () => refuseUpgrade(socket, 502, "upstream_unreachable"),
      );
    });
    preq.end();
  }

  /** The person's frames on the socket count as use of the session. */
  #followFrames(socket: Duplex, head: Buffer, url: string, session: string): void {
    const { tracker, clock } = this.#d;
    if (!tracker) return;
    const reader = new FrameReader((opcode, payload, compressed) => {
      if (isUserFrame(url, opcode, payload, compressed)) tracker.touch(session, clock.now());
    });
    if (head.length) reader.push(head);
    socket.on("data", (chunk: Buffer) => reader.push(chunk));
  }

  /** Fails the request with ETIMEDOUT when a new connection is not up within the deadline. */
  #connectDeadline(preq: ReturnType<typeof request>): void {
    const ms = this.#d.connectTimeoutMs;
    preq.once("socket", (s: Socket) => {
      if (!s.connecting) return;
      const t = setTimeout(
        () => preq.destroy(Object.assign(new Error("upstream connect timeout"), { code: "ETIMEDOUT" })),
        ms,
      );
      s.once("connect", () => clearTimeout(t));
      s.once("close", () => clearTimeout(t));
    });
  }
}
