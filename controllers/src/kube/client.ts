// The one Kubernetes client of Berth: JSON requests and streaming watches over node:http(s), with
// authentication from @kubernetes/client-node's KubeConfig (see kubeconfig.ts for the operator's file and
// in-cluster sources). The worker and the API build it from a KubeConfig (management cluster) or a stored
// credential (GPU clusters); the operator from its configuration, and hands it to the mirror controller.
//
// Why not the generated clients: throughput. Dispatch fans out hundreds of writes a second over a few
// keep-alive connections, and the reconcilers want status codes (404, 409, 410) as values, not exceptions.
import * as http from "node:http";
import * as https from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";

export interface KubeResponse<T> {
  status: number;
  body: T;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: Record<string, unknown>;
}

/** What the controllers need of a Kubernetes client. */
export interface KubeApi {
  readonly server: string;
  /** Any HTTP status resolves; connection failures and timeouts reject. PATCH bodies are merge patches. */
  request<T = unknown>(method: string, path: string, opts?: RequestOptions): Promise<KubeResponse<T>>;
  /** 2xx or throws KubeError. */
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

export class KubeError extends Error {
  readonly status: number;
  readonly reason: string | undefined;
  constructor(method: string, path: string, status: number, body: unknown) {
    const s = (body ?? {}) as { message?: string; reason?: string };
    super(`${method} ${path}: ${status}${s.reason ? ` ${s.reason}` : ""}${s.message ? `: ${s.message}` : ""}`);
    this.name = "KubeError";
    this.status = status;
    this.reason = s.reason;
  }
}

/** An error as a log field: message and, for apiserver answers, the status; for sockets, the code. */
export function errInfo(e: unknown): { message: string; status?: number; code?: string } {
  if (e instanceof KubeError) return { message: e.message, status: e.status };
  if (e instanceof Error) {
    const code = (e as NodeJS.ErrnoException).code;
    return code ? { message: e.message, code } : { message: e.message };
  }
  return { message: String(e) };
}

class StaleConnection extends Error {
  constructor(cause: Error) {
    super(cause.message, { cause });
  }
}

export function isStatus(e: unknown, ...codes: number[]): boolean {
  return e instanceof KubeError && codes.includes(e.status);
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

export class HttpKube implements KubeApi {
  readonly server: string;
  readonly #kc: KubeConfig;
  readonly #opts: HttpKubeOptions;
  #agent: http.Agent | undefined;
  #prepared: Promise<{ headers: Record<string, string>; secure: boolean }> | undefined;
  #preparedAt = 0;

  constructor(kc: KubeConfig, opts: HttpKubeOptions = {}) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("the kubeconfig has no current cluster");
    this.server = cluster.server.replace(/\/+$/, "");
    this.#kc = kc;
    this.#opts = opts;
  }

  /** Authentication material, refreshed every minute (token files rotate). */
  #prepare(): Promise<{ headers: Record<string, string>; secure: boolean }> {
    if (this.#prepared && Date.now() - this.#preparedAt < 60_000) return this.#prepared;
    this.#preparedAt = Date.now();
    this.#prepared = (async () => {
      const o: https.RequestOptions & { headers?: Record<string, string> } = {};
      await this.#kc.applyToHTTPSOptions(o);
      const secure = this.server.startsWith("https:");
      if (!this.#agent) {
        const common = { keepAlive: true, maxSockets: this.#opts.maxSockets ?? 64 };
        this.#agent = secure
          ? new https.Agent({
              ...common,
              ca: o.ca,
              cert: o.cert,
              key: o.key,
              ...(o.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: o.rejectUnauthorized }),
              ...(o.servername === undefined ? {} : { servername: o.servername }),
            })
          : new http.Agent(common);
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

  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<KubeResponse<T>> {
    try {
      return await this.#once<T>(method, path, opts);
    } catch (e) {
      // A kept-alive connection the server closed meanwhile (an apiserver restart, an idle timeout) fails
      // on first use without an answer; one retry on a fresh connection, as Go's client does. Our writes
      // are named objects, so a retried create that did land answers 409, never a duplicate.
      if (!(e instanceof StaleConnection) || opts.signal?.aborted) throw e instanceof StaleConnection ? e.cause : e;
      return this.#once<T>(method, path, opts);
    }
  }

  async #once<T>(method: string, path: string, opts: RequestOptions): Promise<KubeResponse<T>> {
    const prepared = await this.#prepare();
    const headers = { ...prepared.headers };
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    if (payload !== undefined) {
      headers["content-type"] = method === "PATCH" ? "application/merge-patch+json" : "application/json";
      headers["content-length"] = String(Buffer.byteLength(payload));
    }
    const url = new URL(this.server + withQuery(path, opts.query));
    const timeoutMs = opts.timeoutMs ?? this.#opts.requestTimeoutMs ?? 30_000;
    const agent = this.#agent;
    return new Promise((resolve, reject) => {
      const req = (prepared.secure ? https : http).request(
        url,
        { method, headers, agent, signal: opts.signal },
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
        () => req.destroy(new Error(`${method} ${path} timed out after ${timeoutMs} ms`)),
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
    const agent = prepared.secure
      ? new https.Agent({ ...(this.#agent as https.Agent).options, keepAlive: false })
      : new http.Agent({ keepAlive: false });
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
      req.on("error", (e) => finish(e));
      req.end();
    });
  }

  /** Closes the kept-alive connections; a later call opens new ones. */
  close(): void {
    this.#agent?.destroy();
    this.#agent = undefined;
    this.#prepared = undefined;
  }
}
