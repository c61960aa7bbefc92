// The one Kubernetes client of Berth: JSON requests, server-side apply, streaming watches (informer.ts
// relists on 410) and streamed reads (pods/log) over node:http(s). Built from @kubernetes/client-node's
// KubeConfig (config parsing only; see kubeconfig.ts for the operator's file and in-cluster sources) or
// from a stored cluster credential (GPU clusters). The API, the worker, the operator and the gateway use it.
//
// Why not the generated clients: throughput, and failures as values. Dispatch fans out hundreds of writes a
// second over a few keep-alive connections; the reconcilers want status codes (404, 409, 410) as values;
// registration and the connection test must tell "refused", "hangs", "TLS does not verify" and "401" apart
// (KubeTransportError's reason vs KubeError's status), and give up at a deadline with nothing left open.
import * as http from "node:http";
import * as https from "node:https";
import { KubeConfig } from "@kubernetes/client-node";
import { isDeadline, KubeError, KubeTransportError, transportError } from "./errors.ts";

export { errInfo, isStatus, KubeError, KubeTransportError } from "./errors.ts";

export interface KubeResponse<T> {
  status: number;
  body: T;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** The body's type; default JSON, and a merge patch for PATCH (APPLY_PATCH: server-side apply). */
  contentType?: string;
  /** Aborted by a deadline (AbortSignal.timeout): reason TIMEOUT; otherwise ABORTED. */
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** Server-side apply's content type (JSON is YAML). */
export const APPLY_PATCH = "application/apply-patch+yaml";

/** What a stored GPU-cluster credential holds (api/src/domain/clusters/credential.ts' ClusterCredential). */
export interface KubeCredential {
  /** https://host[:port][/path] */
  server: string;
  caPem?: string | undefined;
  token?: string | undefined;
  clientCertPem?: string | undefined;
  clientKeyPem?: string | undefined;
  tlsServerName?: string | undefined;
}

export interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: Record<string, unknown>;
}

/** What the controllers need of a Kubernetes client. */
export interface KubeApi {
  readonly server: string;
  /**
   * Any HTTP status resolves; connection failures and timeouts reject with KubeTransportError. PATCH
   * bodies are merge patches unless `contentType` says otherwise.
   */
  request<T = unknown>(method: string, path: string, opts?: RequestOptions): Promise<KubeResponse<T>>;
  /** 2xx, or throws KubeError (an answer) or KubeTransportError (none). */
  json<T = unknown>(method: string, path: string, opts?: RequestOptions): Promise<T>;
  /**
   * Streams events until the server ends the watch (resolves), the connection fails or stays silent past
   * `idleTimeoutMs` (rejects), or `signal` aborts (resolves). A non-200 answer rejects with KubeError.
   * `onEvent` runs synchronously per event, in order; an error it throws ends the watch with that error.
   */
  watch(
    path: string,
    query: RequestOptions["query"],
    onEvent: (e: WatchEvent) => void,
    opts: { signal?: AbortSignal; idleTimeoutMs: number; onOpen?: () => void },
  ): Promise<void>;
}

/** Path segment escaping for names that come from input (node names, pod names). */
export const seg = (s: string): string => encodeURIComponent(s);

/**
 * Server-side apply of `object` (apiVersion, kind, metadata.name included) as `fieldManager`; `force` takes
 * over fields another manager set (where the object is ours). Created (201) or updated (200).
 */
export function serverSideApply<T = unknown>(
  kube: Pick<KubeApi, "request">,
  path: string,
  object: unknown,
  o: { fieldManager: string; force?: boolean; signal?: AbortSignal },
): Promise<KubeResponse<T>> {
  return kube.request<T>("PATCH", path, {
    body: object,
    contentType: APPLY_PATCH,
    query: { fieldManager: o.fieldManager, ...(o.force ? { force: true } : {}) },
    ...(o.signal ? { signal: o.signal } : {}),
  });
}

class StaleConnection extends Error {
  constructor(cause: Error) {
    super(cause.message, { cause });
  }
}

function withQuery(path: string, query: RequestOptions["query"]): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}${path.includes("?") ? "&" : "?"}${qs}` : path;
}

export interface HttpKubeOptions {
  /** Default 30 s. */
  requestTimeoutMs?: number;
  /** Connections kept per host; this is the client's real concurrency limit. Default 64. */
  maxSockets?: number;
  userAgent?: string;
}

export interface StreamOptions {
  query?: RequestOptions["query"];
  /** Default `text/plain, *\/*` (pods/log). */
  accept?: string;
  /** The caller gives up (the reader went away): the stream ends, reason ABORTED before an answer. */
  signal?: AbortSignal;
  /** Until the apiserver answers; the stream may then stay open for ever. Default 15 s. */
  connectTimeoutMs?: number;
}

export class HttpKube implements KubeApi {
  readonly server: string;
  readonly #kc: KubeConfig | undefined;
  readonly #cred: KubeCredential | undefined;
  readonly #opts: HttpKubeOptions;
  #agent: http.Agent | undefined;
  #tls: https.AgentOptions = {};
  #prepared: Promise<{ headers: Record<string, string>; secure: boolean }> | undefined;
  #preparedAt = 0;
  /** Requests on the kept connections not yet answered (closeWhenSettled waits for them). */
  readonly #inFlight = new Set<Promise<unknown>>();

  /** From a KubeConfig (its current context) or from a stored cluster credential. */
  constructor(source: KubeConfig | KubeCredential, opts: HttpKubeOptions = {}) {
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
  #prepare(): Promise<{ headers: Record<string, string>; secure: boolean }> {
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

  /** A connection of its own, not kept alive (watches and streams must not hold a pooled socket). */
  #ownAgent(secure: boolean): http.Agent {
    return secure ? new https.Agent({ ...this.#tls, keepAlive: false }) : new http.Agent({ keepAlive: false });
  }

  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<KubeResponse<T>> {
    const url = new URL(this.server + withQuery(path, opts.query));
    if (opts.signal?.aborted) {
      throw isDeadline(opts.signal)
        ? new KubeTransportError("TIMEOUT", `${method} ${url.pathname}: deadline passed`)
        : new KubeTransportError("ABORTED", `${method} ${url.pathname}: aborted`);
    }
    // An apiserver that is still filling a resource's cache (just started, or a CRD just created) answers
    // a read 429 "storage is (re)initializing" for a moment: reads wait and ask again, a few times.
    for (let attempt = 0; ; attempt++) {
      const res = await this.#counted(this.#withStaleRetry<T>(method, path, opts, url));
      if (res.status !== 429 || method !== "GET" || attempt >= 4 || opts.signal?.aborted) return res;
      await new Promise((r) => setTimeout(r, 250 * (attempt + 1)));
    }
  }

  #counted<T>(p: Promise<T>): Promise<T> {
    this.#inFlight.add(p);
    const settled = () => this.#inFlight.delete(p);
    p.then(settled, settled);
    return p;
  }

  async #withStaleRetry<T>(method: string, path: string, opts: RequestOptions, url: URL): Promise<KubeResponse<T>> {
    try {
      return await this.#once<T>(method, path, opts);
    } catch (e) {
      // A kept-alive connection the server closed meanwhile (an apiserver restart, an idle timeout) fails
      // on first use without an answer; one retry on a fresh connection, as Go's client does. Our writes
      // are named objects, so a retried create that did land answers 409, never a duplicate.
      if (!(e instanceof StaleConnection) || opts.signal?.aborted)
        throw transportError(e instanceof StaleConnection ? e.cause : e, method, url, opts.signal);
      try {
        return await this.#once<T>(method, path, opts);
      } catch (again) {
        throw transportError(again instanceof StaleConnection ? again.cause : again, method, url, opts.signal);
      }
    }
  }

  async #once<T>(method: string, path: string, opts: RequestOptions): Promise<KubeResponse<T>> {
    const prepared = await this.#prepare();
    const headers = { ...prepared.headers };
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    if (payload !== undefined) {
      headers["content-type"] =
        opts.contentType ?? (method === "PATCH" ? "application/merge-patch+json" : "application/json");
      headers["content-length"] = String(Buffer.byteLength(payload));
    }
    const url = new URL(this.server + withQuery(path, opts.query));
    const timeoutMs = opts.timeoutMs ?? this.#opts.requestTimeoutMs ?? 30_000;
    const agent = this.#agent;
    return new Promise((resolve, reject) => {
      const req = (prepared.secure ? https : http).request(
        url,
        { method, headers, agent, ...(opts.signal ? { signal: opts.signal } : {}) },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            clearTimeout(timer);
            const text = Buffer.concat(chunks).toString("utf8");
            let body: unknown = text;
            try {
              body = JSON.parse(text);
            } catch {
              // not JSON (a proxy's error page, or YAML asked for on purpose): keep the text
            }
            resolve({ status: res.statusCode ?? 0, body: body as T });
          });
          res.on("error", (e) => {
            clearTimeout(timer);
            reject(e);
          });
        },
      );
      const timer = setTimeout(
        () =>
          req.destroy(
            new KubeTransportError(
              "TIMEOUT",
              `${method} ${url.host}${url.pathname}: no answer before the deadline (timed out after ${timeoutMs} ms)`,
            ),
          ),
        timeoutMs,
      );
      req.on("error", (e: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        const stale =
          req.reusedSocket && (e.code === "ECONNRESET" || e.code === "EPIPE" || e.message === "socket hang up");
        reject(stale ? new StaleConnection(e) : e);
      });
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  /**
   * A GET whose 200 answer is handed over as a stream as soon as it starts (pods/log, followed or not);
   * rejects with KubeError for another answer, KubeTransportError for none. The stream has a connection
   * of its own, closed when it ends.
   */
  async stream(path: string, opts: StreamOptions = {}): Promise<http.IncomingMessage> {
    const prepared = await this.#prepare();
    const url = new URL(this.server + withQuery(path, opts.query));
    const where = `GET ${url.host}${url.pathname}`;
    const agent = this.#ownAgent(prepared.secure);
    return new Promise((resolve, reject) => {
      const deadline = setTimeout(
        () => req.destroy(new KubeTransportError("TIMEOUT", `${where}: no answer before the deadline`)),
        opts.connectTimeoutMs ?? 15_000,
      );
      const headers = { ...prepared.headers, accept: opts.accept ?? "text/plain, */*" };
      const req = (prepared.secure ? https : http).request(
        url,
        { method: "GET", headers, agent, ...(opts.signal ? { signal: opts.signal } : {}) },
        (res) => {
          clearTimeout(deadline);
          if (res.statusCode === 200) {
            res.on("close", () => agent.destroy());
            resolve(res);
            return;
          }
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            agent.destroy();
            const text = Buffer.concat(chunks).toString("utf8");
            let body: unknown = text;
            try {
              body = JSON.parse(text);
            } catch {
              // plain text error
            }
            reject(new KubeError("GET", url.pathname, res.statusCode ?? 0, body));
          });
        },
      );
      req.on("error", (e: NodeJS.ErrnoException) => {
        clearTimeout(deadline);
        agent.destroy();
        if (e instanceof KubeTransportError) reject(e);
        else
          reject(
            new KubeTransportError(
              e.name === "AbortError" ? "ABORTED" : (e.code ?? "UNKNOWN"),
              `${where}: ${e.message}`,
              e,
            ),
          );
      });
      req.end();
    });
  }

  async json<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.request<T>(method, path, opts);
    if (res.status < 200 || res.status > 299) throw new KubeError(method, path, res.status, res.body);
    return res.body;
  }

  async watch(
    path: string,
    query: RequestOptions["query"],
    onEvent: (e: WatchEvent) => void,
    opts: { signal?: AbortSignal; idleTimeoutMs: number; onOpen?: () => void },
  ): Promise<void> {
    const prepared = await this.#prepare();
    const url = new URL(this.server + withQuery(path, { ...query, watch: "true" }));
    if (opts.signal?.aborted) return;
    // Watches get their own connection: a long-lived stream must not hold one of the request pool's sockets,
    // nor linger in Node's global (keep-alive) agent after close().
    const agent = this.#ownAgent(prepared.secure);
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (err?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(idle);
        opts.signal?.removeEventListener("abort", onAbort);
        agent.destroy();
        if (err && !opts.signal?.aborted) reject(err);
        else resolve();
      };
      let idle: NodeJS.Timeout | undefined;
      const arm = () => {
        clearTimeout(idle);
        idle = setTimeout(
          () => req.destroy(new Error(`watch ${path} was silent for ${opts.idleTimeoutMs} ms`)),
          opts.idleTimeoutMs,
        );
      };
      const onAbort = () => req.destroy();
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      const req = (prepared.secure ? https : http).request(
        url,
        { method: "GET", headers: prepared.headers, agent },
        (res) => {
          if (res.statusCode !== 200) {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => {
              let body: unknown;
              try {
                body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
              } catch {
                body = undefined;
              }
              finish(new KubeError("WATCH", path, res.statusCode ?? 0, body));
            });
            res.on("error", (e) => finish(e));
            return;
          }
          arm();
          opts.onOpen?.();
          let buffered = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            arm();
            buffered += chunk;
            // Lines are cut at an offset and the rest kept once per chunk: cutting the buffer after every
            // line copied the chunk's remainder per event (a list of events arrives in large chunks).
            let start = 0;
            let nl = buffered.indexOf("\n");
            while (nl >= 0) {
              const line = buffered.slice(start, nl).trim();
              start = nl + 1;
              nl = buffered.indexOf("\n", start);
              if (line === "") continue;
              let stop: Error | undefined;
              try {
                onEvent(JSON.parse(line) as WatchEvent);
              } catch (e) {
                stop =
                  e instanceof SyntaxError ? new Error(`watch ${path}: unreadable event: ${e.message}`) : (e as Error);
              }
              if (stop) {
                // Settle with the caller's error first: destroying the request raises errors of its own
                // ("aborted", "connection lost"), and which comes first must not decide whether a 410 is seen.
                finish(stop);
                req.destroy();
                return;
              }
            }
            buffered = start === 0 ? buffered : buffered.slice(start);
          });
          res.on("end", () => finish());
          res.on("close", () => finish(res.complete ? undefined : new Error(`watch ${path}: connection lost`)));
          res.on("error", (e) => finish(e));
        },
      );
      arm();
      req.on("error", (e) => finish(transportError(e, "WATCH", url, opts.signal)));
      req.end();
    });
  }

  /**
   * Closes the kept-alive connections once the requests on them have been answered (a replaced
   * credential's client: api/src/domain/clusters/clients.ts); at once when none is in flight.
   */
  closeWhenSettled(): void {
    if (this.#inFlight.size === 0) {
      this.close();
      return;
    }
    void Promise.allSettled([...this.#inFlight]).then(() => this.closeWhenSettled());
  }

  /** Closes the kept-alive connections, cutting the requests on them; a later call opens new ones. */
  close(): void {
    this.#agent?.destroy();
    this.#agent = undefined;
    this.#prepared = undefined;
  }
}
