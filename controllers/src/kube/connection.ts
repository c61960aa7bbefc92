// A client's connection to one apiserver (client.ts): its authentication material (from a KubeConfig or a
// stored credential, refreshed every minute), the pool of kept-alive connections requests share, and
// connections of their own for the long reads (streams.ts).
import * as http from "node:http";
import * as https from "node:https";
import { KubeConfig } from "@kubernetes/client-node";
import type { KubeCredential, RequestOptions } from "./api.ts";

export interface Prepared {
  headers: Record<string, string>;
  secure: boolean;
}

export interface ConnectionOptions {
  /** Connections kept per host; this is the client's real concurrency limit. Default 64. */
  maxSockets?: number;
  userAgent?: string;
}

export class Connection {
  readonly server: string;
  readonly #kc: KubeConfig | undefined;
  readonly #cred: KubeCredential | undefined;
  readonly #opts: ConnectionOptions;
  #agent: http.Agent | undefined;
  #tls: https.AgentOptions = {};
  #prepared: Promise<Prepared> | undefined;
  #preparedAt = 0;

  /** From a KubeConfig (its current context) or from a stored cluster credential. */
  constructor(source: KubeConfig | KubeCredential, opts: ConnectionOptions = {}) {
    if (source instanceof KubeConfig) {
      const cluster = source.getCurrentCluster();
      if (!cluster) throw new Error("the kubeconfig has no current cluster");
      this.server = cluster.server.replace(/\/+$/, "");
      this.#kc = source;
    } else {
      this.server = source.server.replace(/\/+$/, "");
      this.#cred = source;
    }
    this.#opts = opts;
  }

  /** Authentication material, refreshed every minute (token files rotate). */
  prepare(): Promise<Prepared> {
    if (this.#prepared && Date.now() - this.#preparedAt < 60_000) return this.#prepared;
    this.#preparedAt = Date.now();
    this.#prepared = (async () => {
      const o: https.RequestOptions & { headers?: Record<string, string> } = {};
      if (this.#kc) await this.#kc.applyToHTTPSOptions(o);
      else if (this.#cred) {
        const c = this.#cred;
        Object.assign(o, {
          ...(c.caPem ? { ca: c.caPem } : {}),
          ...(c.clientCertPem ? { cert: c.clientCertPem } : {}),
          ...(c.clientKeyPem ? { key: c.clientKeyPem } : {}),
          ...(c.tlsServerName ? { servername: c.tlsServerName } : {}),
          headers: c.token ? { authorization: `Bearer ${c.token}` } : {},
        });
      }
      const secure = this.server.startsWith("https:");
      this.#tls = {
        ca: o.ca,
        cert: o.cert,
        key: o.key,
        ...(o.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: o.rejectUnauthorized }),
        ...(o.servername === undefined ? {} : { servername: o.servername }),
      };
      if (!this.#agent) {
        const common = { keepAlive: true, maxSockets: this.#opts.maxSockets ?? 64 };
        this.#agent = secure ? new https.Agent({ ...common, ...this.#tls }) : new http.Agent(common);
      }
      const headers: Record<string, string> = {
        accept: "application/json",
        "user-agent": this.#opts.userAgent ?? "berth-controllers",
      };
      for (const [k, v] of Object.entries(o.headers ?? {})) headers[k.toLowerCase()] = String(v);
      if (o.auth) headers.authorization = `Basic ${Buffer.from(o.auth).toString("base64")}`;
      return { headers, secure };
    })();
    this.#prepared.catch(() => {
      this.#prepared = undefined;
    });
    return this.#prepared;
  }

  /** The pool of kept-alive connections (made by prepare()). */
  get agent(): http.Agent | undefined {
    return this.#agent;
  }

  /** A connection of its own, not kept alive (watches and streams must not hold a pooled socket). */
  ownAgent(secure: boolean): http.Agent {
    return secure ? new https.Agent({ ...this.#tls, keepAlive: false }) : new http.Agent({ keepAlive: false });
  }

  /** `path` with `query` (undefined values left out) on this apiserver. */
  url(path: string, query: RequestOptions["query"]): URL {
    return new URL(this.server + withQuery(path, query));
  }

  /** Closes the kept-alive connections and forgets the material: the next request prepares both again. */
  close(): void {
    this.#agent?.destroy();
    this.#agent = undefined;
    this.#prepared = undefined;
  }
}

function withQuery(path: string, query: RequestOptions["query"]): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}${path.includes("?") ? "&" : "?"}${qs}` : path;
}
