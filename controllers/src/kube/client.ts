// The one Kubernetes client of Berth: JSON requests, server-side apply, streaming watches (informer.ts
// relists on 410) and streamed reads (pods/log) over node:http(s). Built from @kubernetes/client-node's
// KubeConfig (config parsing only; see kubeconfig.ts for the operator's file and in-cluster sources) or
// from a stored cluster credential (GPU clusters). The API, the worker, the operator and the gateway use it.
//
// Why not the generated clients: throughput, and failures as values. Dispatch fans out hundreds of writes a
// second over a few keep-alive connections; the reconcilers want status codes (404, 409, 410) as values;
// registration and the connection test must tell "refused", "hangs", "TLS does not verify" and "401" apart
// (KubeTransportError's reason vs KubeError's status), and give up at a deadline with nothing left open.
//
// Its parts: api.ts, what a client is asked (KubeApi) and handed; connection.ts, the authentication
// material and the kept-alive pool; streams.ts, the reads on a connection of their own (pods/log, watches);
// this file, the requests (the stale-connection retry, the wait on a cache still filling) and closing.
import * as http from "node:http";
import * as https from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import type { KubeApi, KubeCredential, KubeResponse, RequestOptions, WatchEvent } from "./api.ts";
import { Connection, type ConnectionOptions } from "./connection.ts";
import { isDeadline, KubeError, KubeTransportError, transportError } from "./errors.ts";
import { openStream, type StreamOptions, watchEvents } from "./streams.ts";

export {
  APPLY_PATCH,
  type KubeApi,
  type KubeCredential,
  type KubeResponse,
  type RequestOptions,
  seg,
  serverSideApply,
  type WatchEvent,
} from "./api.ts";
export { errInfo, isStatus, KubeError, KubeTransportError } from "./errors.ts";
export type { StreamOptions } from "./streams.ts";

class StaleConnection extends Error {
  constructor(cause: Error) {
    super(cause.message, { cause });
  }
}

export interface HttpKubeOptions extends ConnectionOptions {
  /** Default 30 s. */
  requestTimeoutMs?: number;
}

export class HttpKube implements KubeApi {
  readonly server: string;
  readonly #conn: Connection;
  readonly #opts: HttpKubeOptions;
  /** Requests on the kept connections not yet answered (closeWhenSettled waits for them). */
  readonly #inFlight = new Set<Promise<unknown>>();

  /** From a KubeConfig (its current context) or from a stored cluster credential. */
  constructor(source: KubeConfig | KubeCredential, opts: HttpKubeOptions = {}) {
    this.#conn = new Connection(source, opts);
    this.server = this.#conn.server;
    this.#opts = opts;
  }

  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<KubeResponse<T>> {
    const url = this.#conn.url(path, opts.query);
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
    const prepared = await this.#conn.prepare();
    const headers = { ...prepared.headers };
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    if (payload !== undefined) {
      headers["content-type"] =
        opts.contentType ?? (method === "PATCH" ? "application/merge-patch+json" : "application/json");
      headers["content-length"] = String(Buffer.byteLength(payload));
    }
    const url = this.#conn.url(path, opts.query);
    const timeoutMs = opts.timeoutMs ?? this.#opts.requestTimeoutMs ?? 30_000;
    const agent = this.#conn.agent;
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

  /** A GET handed over as a stream once answered 200 (pods/log): streams.ts openStream. */
  stream(path: string, opts: StreamOptions = {}): Promise<http.IncomingMessage> {
    return openStream(this.#conn, path, opts);
  }

  async json<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.request<T>(method, path, opts);
    if (res.status < 200 || res.status > 299) throw new KubeError(method, path, res.status, res.body);
    return res.body;
  }

  watch(
    path: string,
    query: RequestOptions["query"],
    onEvent: (e: WatchEvent) => void,
    opts: { signal?: AbortSignal; idleTimeoutMs: number; onOpen?: () => void },
  ): Promise<void> {
    return watchEvents(this.#conn, path, query, onEvent, opts);
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
    this.#conn.close();
  }
}
