// The internal listener: operator callbacks under /internal/ and the key set at
// /.well-known/svc-internal-jwks.json, on their own port, closed by default. It is not bound at all until
// configuration names source ranges (BERTH_INTERNAL_ALLOW_CIDRS); a peer outside them gets 403
// `forbidden`. The public app never mounts these routes, so they are 404 there.
//
// The peer address is the socket's. X-Forwarded-For is read only when that socket's peer is a trusted proxy
// (BERTH_TRUSTED_PROXY_CIDRS, http/clientAddress.ts): anyone else's header is ignored.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type Router from "@koa/router";
import Koa, { type Middleware } from "koa";
import type { Logger } from "pino";
import type { Deps } from "../deps.ts";
import { Forbidden } from "../errors.ts";
import { clientAddress } from "../http/clientAddress.ts";
import { errorEnvelopeMiddleware, requestIdMiddleware } from "../http/envelope.ts";
import { metricsMiddleware } from "../http/metrics.ts";
import { SpecificRouter } from "../http/router.ts";
import { allowList } from "./cidr.ts";
import { domainInternalRoutes } from "./domains.ts";
import { type AnyInternalRoute, internalRouteMiddleware } from "./route.ts";
import { internalRoutes } from "./routes.ts";

export interface BuildInternalAppOptions {
  /** Routes of other domains, mounted after the built-in ones. Default: internal/domains.ts' list. */
  routes?: readonly AnyInternalRoute[];
  /** Default: deps.config.internal.allowCidrs. */
  allowCidrs?: readonly string[];
}

/** 403 `forbidden` for a client outside the ranges; a forwarded address counts only from a trusted proxy. */
export function internalGateMiddleware(
  cidrs: readonly string[],
  log: Logger,
  trustedProxyCidrs: readonly string[] = [],
): Middleware {
  const gate = allowList(cidrs);
  const trusted = allowList(trustedProxyCidrs);
  return async (ctx, next) => {
    const peer = clientAddress(ctx.req.socket.remoteAddress, ctx.get("x-forwarded-for"), trusted);
    if (!gate.allows(peer)) {
      log.warn({ peer, path: ctx.path }, "internal plane: peer outside the allowed ranges");
      throw new Forbidden("the internal plane is not open to this network", { peer: peer ?? null });
    }
    await next();
  };
}

/** Mounts the built-in internal routes and `extra` (other domains') on a router; refuses duplicates. */
export function mountInternalRoutes(router: Router, deps: Deps, extra: readonly AnyInternalRoute[] = []): void {
  const seen = new Set<string>();
  for (const route of [...internalRoutes, ...extra]) {
    const id = `${route.method} ${route.path}`;
    if (seen.has(id)) throw new Error(`internal route declared twice: ${id}`);
    seen.add(id);
    router[route.method](route.path, internalRouteMiddleware(route, deps));
  }
}

/**
 * The internal app on its own (tests, startInternalListener). api/src/app.ts composes the same pieces
 * (internalGateMiddleware, mountInternalRoutes) on the process' common base app.
 */
export function buildInternalApp(deps: Deps, opts: BuildInternalAppOptions = {}): Koa {
  const app = new Koa();
  app.on("error", (err: unknown) => deps.log.error({ err }, "error escaped the internal envelope middleware"));
  app.use(requestIdMiddleware());
  app.use(metricsMiddleware(deps.metrics));
  app.use(errorEnvelopeMiddleware({ clock: deps.clock, log: deps.log }));
  app.use(
    internalGateMiddleware(
      opts.allowCidrs ?? deps.config.internal.allowCidrs,
      deps.log,
      deps.config.clientAddress?.trustedProxyCidrs,
    ),
  );
  const router = new SpecificRouter();
  mountInternalRoutes(router, deps, opts.routes ?? domainInternalRoutes);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

export interface InternalListener {
  server: Server;
  /** http://host:port as bound (the real port when 0 was asked for). */
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface StartInternalListenerOptions extends BuildInternalAppOptions {
  /** Default: deps.config.internal.host / port. */
  host?: string;
  port?: number;
}

/**
 * Binds the internal listener when the configuration opens it; resolves to undefined (nothing bound) when
 * no source range is configured — closed by default.
 */
export async function startInternalListener(
  deps: Deps,
  opts: StartInternalListenerOptions = {},
): Promise<InternalListener | undefined> {
  const cidrs = opts.allowCidrs ?? deps.config.internal.allowCidrs;
  if (cidrs.length === 0) {
    deps.log.info("internal plane closed: BERTH_INTERNAL_ALLOW_CIDRS is empty, so nothing is bound");
    return undefined;
  }
  const app = buildInternalApp(deps, { ...opts, allowCidrs: cidrs });
  const server = createServer(app.callback());
  const host = opts.host ?? deps.config.internal.host;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? deps.config.internal.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port, address, family } = server.address() as AddressInfo;
  const shown = family === "IPv6" ? `[${address}]` : address;
  deps.log.info({ address, port, allowCidrs: cidrs }, "internal plane listening");
  return {
    server,
    url: `http://${shown}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
