// The Koa apps. buildApp: the public listener (/api/v1, /healthz; /metrics has a listener of its own,
// main.ts). buildInternalApp: the
// operator plane (/internal, /.well-known), only started when configuration opens it.

import Koa from "koa";
import type { Deps } from "./deps.ts";
import { clientAddressMiddleware } from "./http/clientAddress.ts";
import { serveConsole } from "./http/console.ts";
import { corsMiddleware } from "./http/cors.ts";
import { errorEnvelopeMiddleware, requestIdMiddleware } from "./http/envelope.ts";
import { metricsMiddleware } from "./http/metrics.ts";
import { mountRoutes, type RouteDef } from "./http/route.ts";
import { SpecificRouter } from "./http/router.ts";
import { internalGateMiddleware, mountInternalRoutes } from "./internal/app.ts";
import { domainInternalRoutes } from "./internal/domains.ts";
import type { AnyInternalRoute } from "./internal/route.ts";
import { allRoutes } from "./routes/index.ts";
import { mountDocs } from "./routes/system/docs.ts";

/** Requests whose handlers are still running: stop() waits for them before closing the pool. */
export interface InFlight {
  count: number;
}

export interface BuildAppOptions {
  /** Defaults to every route of the contract; tests add their own. */
  routes?: readonly RouteDef[];
  /** Counts this app's running handlers (main.ts drains it at stop). */
  inFlight?: InFlight;
}

function baseApp(deps: Deps, counter: InFlight = { count: 0 }): Koa {
  const app = new Koa();
  // Outermost, and counted until the handler finishes, even when the client has already gone away.
  app.use(async (_ctx, next) => {
    counter.count += 1;
    try {
      await next();
    } finally {
      counter.count -= 1;
    }
  });
  // Errors never reach Koa's own handler (the envelope middleware answers them); anything that does is a bug.
  app.on("error", (err: unknown) => deps.log.error({ err }, "error escaped the envelope middleware"));
  app.use(requestIdMiddleware());
  app.use(clientAddressMiddleware(deps.config.clientAddress?.trustedProxyCidrs ?? []));
  app.use(metricsMiddleware(deps.metrics));
  app.use(errorEnvelopeMiddleware({ clock: deps.clock, log: deps.log }));
  return app;
}

export function buildApp(deps: Deps, opts: BuildAppOptions = {}): Koa {
  const app = baseApp(deps, opts.inFlight);
  app.use(corsMiddleware(deps.config.http.corsAllowOrigins));
  const router = new SpecificRouter();
  mountRoutes(router, opts.routes ?? allRoutes, deps);
  mountDocs(router);
  app.use(router.routes());
  // Sets 405 + Allow (and 501 for methods nobody serves); the envelope middleware turns it into the envelope.
  app.use(router.allowedMethods());
  // The built console at `/`: its assets and index.html for deep links; never /api, /healthz, /metrics.
  app.use(serveConsole({ dist: deps.config.console.dir }));
  return app;
}

export function buildInternalApp(
  deps: Deps,
  opts: { routes?: readonly AnyInternalRoute[]; inFlight?: InFlight } = {},
): Koa {
  const app = baseApp(deps, opts.inFlight);
  // Source ranges first (403 for anyone else), then the internal routes (api/src/internal/).
  app.use(
    internalGateMiddleware(deps.config.internal.allowCidrs, deps.log, deps.config.clientAddress?.trustedProxyCidrs),
  );
  const router = new SpecificRouter();
  mountInternalRoutes(router, deps, opts.routes ?? domainInternalRoutes);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
