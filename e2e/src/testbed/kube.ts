// The smallest Kubernetes client the bed needs for its own set-up (readiness, nodes, RBAC, tokens):
// JSON over HTTPS with a bearer token and the cluster's CA. Tests and Berth use @kubernetes/client-node
// with the kubeconfig instead; this one exists so the bed depends on nothing but node:https.
import { Agent, request } from "node:https";

export interface KubeResponse<T = unknown> {
  status: number;
  body: T;
  text: string;
}

export class KubeHttpError extends Error {
  readonly status: number;
  readonly text: string;
  constructor(method: string, path: string, status: number, text: string) {
    super(`${method} ${path} -> ${status}: ${text.slice(0, 500)}`);
    this.status = status;
    this.text = text;
  }
}

export interface KubeHttpOptions {
  server: string;
  caPem: string;
  token: string;
}

export class KubeHttp {
  readonly server: string;
  readonly #token: string;
  readonly #agent: Agent;

  constructor(opts: KubeHttpOptions) {
    this.server = opts.server;
    this.#token = opts.token;
    this.#agent = new Agent({ ca: opts.caPem, keepAlive: true, maxSockets: 16 });
  }

  /** Any status; never throws for HTTP errors, only for connection failures. */
  raw<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    contentType = "application/json",
  ): Promise<KubeResponse<T>> {
    const url = new URL(path, this.server);
    const payload = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        {
          method,
          agent: this.#agent,
          headers: {
            authorization: `Bearer ${this.#token}`,
            accept: "application/json",
            ...(payload === undefined
              ? {}
              : { "content-type": contentType, "content-length": Buffer.byteLength(payload) }),
          },
          timeout: 30_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: unknown = text;
            if ((res.headers["content-type"] ?? "").includes("json")) {
              try {
                parsed = JSON.parse(text);
              } catch {
                // keep text
              }
            }
            resolve({ status: res.statusCode ?? 0, body: parsed as T, text });
          });
          res.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${method} ${url} timed out`)));
      req.on("error", reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  /** 2xx or throws KubeHttpError. */
  async json<T = unknown>(method: string, path: string, body?: unknown, contentType?: string): Promise<T> {
    const res = await this.raw<T>(method, path, body, contentType);
    if (res.status < 200 || res.status > 299) throw new KubeHttpError(method, path, res.status, res.text);
    return res.body;
  }

  /** Create, treating 409 AlreadyExists as success. */
  async ensure(path: string, body: unknown): Promise<void> {
    const res = await this.raw("POST", path, body);
    if (res.status === 409) return;
    if (res.status < 200 || res.status > 299) throw new KubeHttpError("POST", path, res.status, res.text);
  }

  /**
   * Watches `path` (a list, e.g. narrowed by `fieldSelector`) from `resourceVersion` and resolves with the
   * first event `wanted` accepts; rejects when the watch ends or `timeoutMs` passes first. An event the
   * object's last read would miss (a deletion seen for an instant) is caught here.
   */
  watchUntil<T = unknown>(
    path: string,
    resourceVersion: string,
    wanted: (event: { type: string; object: T }) => boolean,
    timeoutMs: number,
  ): Promise<{ type: string; object: T }> {
    const url = new URL(path, this.server);
    url.searchParams.set("watch", "true");
    url.searchParams.set("resourceVersion", resourceVersion);
    url.searchParams.set("timeoutSeconds", String(Math.ceil(timeoutMs / 1000)));
    return new Promise((resolve, reject) => {
      let buffered = "";
      const req = request(
        url,
        { agent: this.#agent, headers: { authorization: `Bearer ${this.#token}`, accept: "application/json" } },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            return reject(new KubeHttpError("GET", url.pathname, res.statusCode ?? 0, "a watch was refused"));
          }
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            buffered += chunk;
            for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
              const event = JSON.parse(buffered.slice(0, nl)) as { type: string; object: T };
              buffered = buffered.slice(nl + 1);
              if (event.type === "ERROR") {
                req.destroy();
                return reject(new Error(`watching ${url.pathname}: ${JSON.stringify(event.object).slice(0, 300)}`));
              }
              if (wanted(event)) {
                resolve(event);
                req.destroy();
                return;
              }
            }
          });
          res.on("end", () => reject(new Error(`watching ${url.pathname}: it ended before the awaited event`)));
          res.on("error", reject);
        },
      );
      req.setTimeout(timeoutMs + 5_000, () => req.destroy(new Error(`watching ${url.pathname} timed out`)));
      req.on("error", reject);
      req.end();
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
