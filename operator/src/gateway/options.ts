// The gateway's options and what startGateway hands back (gateway.ts), with the defaults its parts share.
import type { Server } from "node:http";
import type { Logger } from "pino";
import type { InternalClient } from "../controlplane/client.ts";
import type { ActivityTracker } from "./activity.ts";
import type { GatewayMetrics } from "./metrics.ts";
import type { UpstreamResolver } from "./upstream.ts";
import type { ConnectVerifier } from "./verifier.ts";

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

export const DEFAULT_COOKIE_TTL_SECONDS = 600;
export const DEFAULT_UPSTREAM_CONNECT_TIMEOUT_MS = 5000;
