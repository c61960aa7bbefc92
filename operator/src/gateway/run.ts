// From a parsed configuration to a running gateway: files read, certificate made, cookie keys settled,
// resolver chosen; then one process, or several sharing the port (workers.ts).
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import type { Logger } from "pino";
import { InternalClient } from "../controlplane/client.ts";
import { ActivityTracker } from "./activity.ts";
import { type GatewayConfig, parseCookieKeys, parseUpstreamTable } from "./config.ts";
import { type GatewayOptions, startGateway } from "./gateway.ts";
import { GatewayMetrics, startStatusServer } from "./metrics.ts";
import { selfSignedCertificate } from "./selfSigned.ts";
import type { PreparedGateway, ServingGateway } from "./serving.ts";
import { RouteFeedUpstreams, StaticUpstreams, type UpstreamResolver } from "./upstream.ts";
import { httpVerifier } from "./verifier.ts";
import { startGatewayWorkers } from "./workers.ts";

export async function prepareGateway(config: GatewayConfig): Promise<PreparedGateway> {
  const tls =
    config.tls.mode === "files"
      ? { certPem: await readFile(config.tls.certFile, "utf8"), keyPem: await readFile(config.tls.keyFile, "utf8") }
      : config.tls.mode === "self-signed"
        ? selfSignedCertificate({ names: config.tls.names })
        : undefined;
  const keys = config.cookieKeyFile ? parseCookieKeys(await readFile(config.cookieKeyFile, "utf8")) : [randomBytes(32)];
  return { config, ...(tls ? { tls } : {}), cookieKeys: keys.map((k) => k.toString("hex")) };
}

/** startGateway's options for one process of a prepared gateway. */
export function gatewayOptions(
  p: PreparedGateway,
  o: {
    log?: Logger;
    upstreams?: UpstreamResolver;
    port?: number;
    reusePort?: boolean;
    metrics?: GatewayMetrics;
  } = {},
): GatewayOptions {
  const { config } = p;
  const up = config.upstream;
  const upstreams =
    o.upstreams ??
    (up.mode === "static"
      ? new StaticUpstreams(parseUpstreamTable(up.table))
      : new RouteFeedUpstreams({
          url: up.url,
          tokenFile: config.tokenFile,
          onState: (state, why) =>
            state === "connected"
              ? o.log?.info({ url: up.url }, "following the operator's routes")
              : o.log?.warn({ why }, "the operator's routes are not followed; the last table is kept"),
        }).start());
  return {
    clusterId: config.clusterId,
    verifier: httpVerifier({
      baseUrl: config.controlPlaneUrl,
      tokenFile: config.tokenFile,
      timeoutMs: config.verifyTimeoutMs,
    }),
    upstreams,
    ...(config.activityIntervalMs > 0
      ? {
          activity: {
            tracker: new ActivityTracker(),
            intervalMs: config.activityIntervalMs,
            client: new InternalClient({
              baseUrl: config.controlPlaneUrl,
              tokenFile: config.tokenFile,
              timeoutMs: config.verifyTimeoutMs,
            }),
          },
        }
      : {}),
    cookieKeys: p.cookieKeys.map((k) => Buffer.from(k, "hex")),
    cookieTtlSeconds: config.cookieTtlSeconds,
    ...(p.tls ? { tls: p.tls } : {}),
    ...(config.secureCookies !== undefined ? { secureCookies: config.secureCookies } : {}),
    host: config.host,
    port: o.port ?? config.port,
    ...(o.reusePort ? { reusePort: true } : {}),
    upstreamConnectTimeoutMs: config.upstreamConnectTimeoutMs,
    ...(o.log ? { log: o.log } : {}),
    ...(o.metrics ? { metrics: o.metrics } : {}),
  };
}

/**
 * `workers` (default: the configuration's, else os.availableParallelism()) above 1 runs that many worker
 * processes sharing the port; 1 serves in this process. An in-process `upstreams` resolver cannot be
 * shared with workers, so it requires one process.
 */
export async function runGateway(
  config: GatewayConfig,
  o: { log?: Logger; upstreams?: UpstreamResolver; workers?: number } = {},
): Promise<ServingGateway> {
  const workers = o.workers ?? config.workers ?? availableParallelism();
  if (o.upstreams && workers > 1)
    throw new Error("an in-process upstream resolver cannot be shared with worker processes: use workers: 1");
  const prepared = await prepareGateway(config);
  if (workers > 1) return startGatewayWorkers(prepared, { workers, ...(o.log ? { log: o.log } : {}) });
  const metrics = new GatewayMetrics();
  const g = await startGateway(gatewayOptions(prepared, { ...o, metrics }));
  const status =
    config.statusPort !== undefined
      ? await startStatusServer(() => metrics.registry.metrics(), { host: config.statusHost, port: config.statusPort })
      : undefined;
  return {
    url: g.url,
    port: g.port,
    pids: [process.pid],
    ...(status ? { statusUrl: status.url } : {}),
    close: async () => {
      await Promise.all([g.close(), status?.close()]);
    },
  };
}
