// The gateway's HTTP side: a connect link redeemed into a cookie, a cookie checked (and renewed past half
// its life), the request forwarded to the session's upstream (forward.ts), or the page that says why not.
// Synchronous where nothing is waited for: the common path (a valid cookie, a table's upstream) makes no
// promise.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { type ActivityTracker, isUserRequest } from "./activity.ts";
import { sendPage } from "./answers.ts";
import { type CookieClaims, type CookieHeaders, type ReadCookies, verdictOn } from "./cookie.ts";
import type { Forwarder } from "./forward.ts";
import type { SessionGrants } from "./grants.ts";
import { carriesBody, cookieHeader, forwardedRequestHeaders } from "./headers.ts";
import { type GatewayMetrics, statusClass, upstreamTimer } from "./metrics.ts";
import { pages } from "./pages.ts";
import { withoutToken } from "./paths.ts";
import { planRequest, signedOutReason } from "./plan.ts";
import type { Upstream, UpstreamResolver } from "./upstream.ts";

export interface HttpProxyDeps {
  clusterId: string;
  grants: SessionGrants;
  cookies: CookieHeaders;
  upstreams: UpstreamResolver;
  forwarder: Forwarder;
  secure: boolean;
  clock: { now(): number };
  nowSeconds(): number;
  tracker?: ActivityTracker | undefined;
  metrics?: GatewayMetrics | undefined;
  log?: Logger | undefined;
}

export class HttpProxy {
  readonly #d: HttpProxyDeps;

  constructor(d: HttpProxyDeps) {
    this.#d = d;
  }

  /** A promise only when it has to wait (redemption, renewal, an asynchronous resolver, a page to explain). */
  serve(req: IncomingMessage, res: ServerResponse): void | Promise<void> {
    const url = req.url ?? "/";
    const plan = planRequest(url);
    switch (plan.kind) {
      case "health":
        res.writeHead(200, { "content-type": "text/plain" }).end("ok");
        return;
      case "page":
        return sendPage(res, plan.page);
      case "redirect":
        res.writeHead(308, { location: plan.location, "cache-control": "no-store" }).end();
        return;
      case "redeem":
        return this.#redeem(req, res, plan.cr, plan.token);
      case "cookie": {
        const cr = plan.cr;
        const cookies = this.#d.cookies.read(cookieHeader(req.rawHeaders));
        const verdict = verdictOn(cookies, { cr, clusterId: this.#d.clusterId, nowSeconds: this.#d.nowSeconds() });
        if (!verdict.ok) return sendPage(res, { ...pages.notSignedIn(), reason: signedOutReason(verdict) });
        if (verdict.renew) return this.#renewThenProxy(req, res, cr, verdict.claims, cookies);
        return this.#proxy(req, res, cr, verdict.claims, cookies);
      }
    }
  }

  async #redeem(req: IncomingMessage, res: ServerResponse, cr: string, token: string): Promise<void> {
    const { grants, log } = this.#d;
    const url = req.url ?? "/";
    // Never log `url` here: it holds the token.
    const out = await grants.verifier.redeem({ cr, token });
    if (out.kind === "unavailable") {
      log?.warn({ cr, why: out.why }, "connect token could not be verified");
      return sendPage(res, pages.cannotVerify());
    }
    if (out.kind === "refused") return sendPage(res, grants.pageOf(out.refusal));
    if (out.grant.crName !== cr || out.grant.clusterId !== this.#d.clusterId)
      return sendPage(res, pages.refused("other_session", "This link was issued for another session."));
    log?.info({ cr, session: out.grant.sessionId, user: out.grant.userId }, "connect token redeemed");
    this.#d.tracker?.touch(out.grant.sessionId, this.#d.clock.now()); // a person followed a connect link
    res
      .writeHead(303, {
        location: withoutToken(url),
        "set-cookie": grants.cookieFor(out.grant),
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
      })
      .end();
  }

  async #renewThenProxy(
    req: IncomingMessage,
    res: ServerResponse,
    cr: string,
    claims: CookieClaims,
    cookies: ReadCookies,
  ): Promise<void> {
    const { grants } = this.#d;
    const out = await grants.renew(claims);
    if (out.kind === "refused")
      return sendPage(res, grants.pageOf(out.refusal), { "set-cookie": grants.clearCookie(cr) });
    // Unavailable: the cookie is still valid; serve, and try again on the next request.
    return this.#proxy(req, res, cr, claims, cookies, out.kind === "grant" ? grants.cookieFor(out.grant) : undefined);
  }

  /** Resolves the session's upstream and proxies, or answers with the page that says why there is none. */
  #proxy(
    req: IncomingMessage,
    res: ServerResponse,
    cr: string,
    claims: CookieClaims,
    cookies: ReadCookies,
    extraCookie?: string,
  ): void | Promise<void> {
    const up = this.#d.upstreams.resolve(cr);
    // Synchronous resolvers (a table, Service DNS names) keep the common path free of promises.
    if (up instanceof Promise) return up.then((u) => this.#proxyTo(req, res, u, cr, claims, cookies, extraCookie));
    return this.#proxyTo(req, res, up, cr, claims, cookies, extraCookie);
  }

  #proxyTo(
    req: IncomingMessage,
    res: ServerResponse,
    up: Upstream | undefined,
    cr: string,
    claims: CookieClaims,
    cookies: ReadCookies,
    extraCookie?: string,
  ): void | Promise<void> {
    const { grants, tracker, clock, metrics, log, secure } = this.#d;
    if (!up) return grants.explain(claims).then((p) => sendPage(res, p));
    if (tracker && isUserRequest(req.method, req.headers)) tracker.touch(claims.s, clock.now());
    const raw = req.rawHeaders;
    const timed = metrics ? upstreamTimer(metrics) : undefined;
    this.#d.forwarder.forward(req, res, {
      upstream: up,
      cr,
      headers: forwardedRequestHeaders(raw, { remote: req.socket.remoteAddress ?? "", secure, cr, cookies }),
      body: carriesBody(raw),
      extraCookie,
      answered: timed ? (status) => timed(statusClass(status)) : undefined,
      failed(e) {
        timed?.("failed");
        log?.debug({ cr, err: e.code ?? e.message }, "upstream error");
        grants.explain(claims).then(
          (p) => sendPage(res, p),
          () => sendPage(res, pages.unreachable()),
        );
      },
    });
  }
}
