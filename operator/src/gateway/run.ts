// From a parsed configuration to a running gateway: files read, certificate made, resolver chosen.
import { readFile } from "node:fs/promises";
import type { Logger } from "pino";
import { type GatewayConfig, parseCookieKeys, parseUpstreamTable } from "./config.ts";
import { type RunningGateway, startGateway } from "./gateway.ts";
import { selfSignedCertificate } from "./selfSigned.ts";
import { StaticUpstreams, serviceDnsUpstreams, type UpstreamResolver } from "./upstream.ts";
import { httpVerifier } from "./verifier.ts";

export async function runGateway(
  config: GatewayConfig,
  o: { log?: Logger; upstreams?: UpstreamResolver } = {},
): Promise<RunningGateway> {
  const tls =
    config.tls.mode === "files"
      ? { certPem: await readFile(config.tls.certFile, "utf8"), keyPem: await readFile(config.tls.keyFile, "utf8") }
      : config.tls.mode === "self-signed"
        ? selfSignedCertificate({ names: config.tls.names })
        : undefined;
  const upstreams =
    o.upstreams ??
    (config.upstream.mode === "static"
      ? new StaticUpstreams(parseUpstreamTable(config.upstream.table))
      : serviceDnsUpstreams({
          namespace: config.upstream.namespace,
          port: config.upstream.port,
          clusterDomain: config.upstream.clusterDomain,
        }));
  const cookieKeys = config.cookieKeyFile ? parseCookieKeys(await readFile(config.cookieKeyFile, "utf8")) : undefined;
  return startGateway({
    clusterId: config.clusterId,
    verifier: httpVerifier({
      baseUrl: config.controlPlaneUrl,
      tokenFile: config.tokenFile,
      timeoutMs: config.verifyTimeoutMs,
    }),
    upstreams,
    ...(cookieKeys ? { cookieKeys } : {}),
    cookieTtlSeconds: config.cookieTtlSeconds,
    ...(tls ? { tls } : {}),
    ...(config.secureCookies !== undefined ? { secureCookies: config.secureCookies } : {}),
    host: config.host,
    port: config.port,
    upstreamConnectTimeoutMs: config.upstreamConnectTimeoutMs,
    ...(o.log ? { log: o.log } : {}),
  });
}
