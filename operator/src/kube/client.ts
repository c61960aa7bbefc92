// A small JSON client for the GPU cluster's apiserver: plain requests and streaming watches over
// node:http(s), with authentication from @kubernetes/client-node's KubeConfig (kubeconfig files, exec
// plugins, in-cluster token files that the kubelet rotates). Raw JSON rather than the generated API
// classes: watches deliver raw JSON anyway, and the reflector and the lease code want status codes, not
// exceptions.
import * as http from "node:http";
import * as https from "node:https";
import { KubeConfig } from "@kubernetes/client-node";
import type { OperatorConfig } from "../config.ts";

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

const SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

export function loadKubeConfig(source: OperatorConfig["kube"]): KubeConfig {
  const kc = new KubeConfig();
  if (source.mode === "kubeconfig") {
    kc.loadFromFile(source.path);
    if (source.context) kc.setCurrentContext(source.context);
  } else {
    const host = source.host.includes(":") ? `[${source.host}]` : source.host;
    kc.loadFromClusterAndUser(
      {
        name: "in-cluster",
        server: `https://${host}:${source.port}`,
        caFile: `${SA_DIR}/ca.crt`,
        skipTLSVerify: false,
      },
      // The tokenFile provider re-reads the projected token (kubelet rotates it).
      { name: "in-cluster", authProvider: { name: "tokenFile", config: { tokenFile: `${SA_DIR}/token` } } },
    );
  }
  return kc;
}

function withQuery(path: string, query: RequestOptions["query"]): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}${path.includes("?") ? "&" : "?"}${qs}` : path;
}

export class KubeClient {
  readonly server: string;
  readonly #kc: KubeConfig;
  readonly #timeoutMs: number;
  #agent: http.Agent | undefined;

  constructor(kc: KubeConfig, opts: { requestTimeoutMs?: number } = {}) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("the kubeconfig has no current cluster");
    this.server = cluster.server.replace(/\/+$/, "");
    this.#kc = kc;
    this.#timeoutMs = opts.requestTimeoutMs ?? 30_000;
  }

  /** Authentication is applied for every request, so rotated credentials are picked up. */
  async #prepare(): Promise<{ headers: Record<string, string>; agent: http.Agent; secure: boolean }> {
    const o: https.RequestOptions & { headers?: Record<string, string> } = {};
    await this.#kc.applyToHTTPSOptions(o);
    const secure = this.server.startsWith("https:");
    // One keep-alive agent of our own (KubeConfig's cached agent does not keep connections alive).
    this.#agent ??= secure
      ? new https.Agent({
          keepAlive: true,
          ca: o.ca,
          cert: o.cert,
          key: o.key,
          ...(o.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: o.rejectUnauthorized }),
          ...(o.servername === undefined ? {} : { servername: o.servername }),
        })
      : new http.Agent({ keepAlive: true });
    const headers: Record<string, string> = { accept: "application/json", "user-agent": "berth-operator" };
    for (const [k, v] of Object.entries(o.headers ?? {})) headers[k.toLowerCase()] = String(v);
    if (o.auth) headers.authorization = `Basic ${Buffer.from(o.auth).toString("base64")}`;
    return { headers, agent: this.#agent, secure };
  }

  /** Any HTTP status resolves; connection failures and timeouts reject. */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<KubeResponse<T>> {
    const { headers, agent, secure } = await this.#prepare();
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    if (payload !== undefined) {
      headers["content-type"] = method === "PATCH" ? "application/merge-patch+json" : "application/json";
      headers["content-length"] = String(Buffer.byteLength(payload));
    }
    const url = new URL(this.server + withQuery(path, opts.query));
    const timeoutMs = opts.timeoutMs ?? this.#timeoutMs;
    return new Promise((resolve, reject) => {
      const req = (secure ? https : http).request(url, { method, headers, agent, signal: opts.signal }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON (a proxy's error page): keep the text
          }
          resolve({ status: res.statusCode ?? 0, body: body as T });
        });
        res.on("error", (e) => {
          clearTimeout(timer);
          reject(e);
        });
      });
      const timer = setTimeout(
        () => req.destroy(new Error(`${method} ${path} timed out after ${timeoutMs} ms`)),
        timeoutMs,
      );
      req.on("error", (e) => {
        clearTimeout(timer);
        reject(e);
      });
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  /** 2xx or throws KubeError. */
  async json<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.request<T>(method, path, opts);
    if (res.status < 200 || res.status > 299) throw new KubeError(method, path, res.status, res.body);
    return res.body;
  }

  /**
   * Streams a watch until the server ends it (resolves), the connection fails or stays silent past
   * `idleTimeoutMs` (rejects), or `signal` aborts (resolves). A non-200 answer rejects with KubeError.
   * `onEvent` is called synchronously per event, in order; returning (or throwing) an Error ends the
   * watch with it, any other return value is ignored.
   */
  async watch(
    path: string,
    query: RequestOptions["query"],
    onEvent: (e: WatchEvent) => unknown,
    opts: { signal?: AbortSignal; idleTimeoutMs: number; onOpen?: () => void },
  ): Promise<void> {
    const { headers, agent, secure } = await this.#prepare();
    const url = new URL(this.server + withQuery(path, { ...query, watch: "true" }));
    if (opts.signal?.aborted) return;
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (err?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(idle);
        opts.signal?.removeEventListener("abort", onAbort);
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
      const req = (secure ? https : http).request(url, { method: "GET", headers, agent }, (res) => {
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
          let nl = buffered.indexOf("\n");
          while (nl >= 0) {
            const line = buffered.slice(0, nl).trim();
            buffered = buffered.slice(nl + 1);
            nl = buffered.indexOf("\n");
            if (line === "") continue;
            let event: WatchEvent;
            let stop: Error | undefined;
            try {
              event = JSON.parse(line) as WatchEvent;
              const r = onEvent(event);
              stop = r instanceof Error ? r : undefined;
            } catch (e) {
              stop =
                e instanceof SyntaxError ? new Error(`watch ${path}: unreadable event: ${e.message}`) : (e as Error);
            }
            if (stop) {
              // Settle first, then drop the connection without an error of its own.
              finish(stop);
              req.destroy();
              return;
            }
          }
        });
        res.on("end", () => finish());
        // A connection cut mid-stream (apiserver killed) closes without 'end'.
        res.on("close", () => finish(res.complete ? undefined : new Error(`watch ${path}: connection lost`)));
        res.on("error", (e) => finish(e));
      });
      arm();
      req.on("error", (e) => finish(e));
      req.end();
    });
  }

  close(): void {
    this.#agent?.destroy();
    this.#agent = undefined;
  }
}
