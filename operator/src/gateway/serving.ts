// The shapes run.ts and workers.ts share: a prepared gateway goes to the workers, a serving one comes back.
import type { GatewayConfig } from "./config.ts";

/**
 * Everything a gateway process needs beyond its configuration, settled once: with several workers every
 * one of them must present the same certificate and sign and check cookies with the same keys (a cookie
 * set by one is opened by another on the browser's next connection). Plain data, sent to workers over IPC.
 */
export interface PreparedGateway {
  config: GatewayConfig;
  tls?: { certPem: string; keyPem: string };
  /** Hex. The configured keys, or one random key made here (a restart signs everyone out; ADR 0004). */
  cookieKeys: string[];
}

/** A gateway serving its port, in this process or in workers. */
export interface ServingGateway {
  url: string;
  port: number;
  /** The processes serving the port: this one, or the workers. */
  pids: number[];
  /** GET {statusUrl}/metrics: the gateway's counters, its workers' merged (when a status port is set). */
  statusUrl?: string;
  /** Stops serving; with workers, returns once every worker has exited. */
  close(): Promise<void>;
}
