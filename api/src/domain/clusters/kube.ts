// The control plane's client for a registered GPU cluster: JSON over HTTPS with the stored credential.
//
// Why not @kubernetes/client-node here: registration and the connection test must tell "refused",
// "hangs", "TLS does not verify" and "401" apart, and give up at a deadline with nothing left open.
// node:https with an AbortSignal does exactly that; the generated clients hide the socket error and
// take the signal only through middleware. Code that prefers the generated clients gets a KubeConfig
// from `credentialToKubeConfig`.
import { Agent, request } from "node:https";
import type { ClusterCredential } from "./credential.ts";

export interface KubeResult<T = unknown> {
  status: number;
  body: T;
}

/** The request never got an HTTP answer: refused, reset, DNS, TLS, or the deadline passed. */
export class KubeTransportError extends Error {
  /** ECONNREFUSED, ENOTFOUND, TIMEOUT, DEPTH_ZERO_SELF_SIGNED_CERT, ... */
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** An HTTP answer outside 2xx. `kubeReason` is the Status object's `reason` when there is one. */
export class KubeStatusError extends Error {
  readonly status: number;
  readonly kubeReason?: string;
  constructor(method: string, path: string, status: number, body: unknown) {
    const msg =
      typeof body === "object" && body !== null && "message" in body
        ? String((body as { message: unknown }).message)
        : "";
    super(`${method} ${path} -> ${status}${msg ? `: ${msg}` : ""}`);
    this.status = status;
    if (typeof body === "object" && body !== null && "reason" in body)
      this.kubeReason = String((body as { reason: unknown }).reason);
  }
}

export interface KubeRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
  /** Per-request cap in ms when no signal is given. Default 30 s. */
  timeoutMs?: number;
}

export interface KubeClient {
  readonly server: string;
  /** Any HTTP status; throws KubeTransportError only. */
  raw<T = unknown>(req: KubeRequest): Promise<KubeResult<T>>;
  /** 2xx or throws KubeStatusError / KubeTransportError. */
  json<T = unknown>(req: KubeRequest): Promise<T>;
  close(): void;
}

export function kubeClient(cred: ClusterCredential): KubeClient {
  const agent = new Agent({
    ca: cred.caPem,
    cert: cred.clientCertPem,
    key: cred.clientKeyPem,
    servername: cred.tlsServerName,
    keepAlive: true,
    maxSockets: 8,
  });
  const base = cred.server.endsWith("/") ? cred.server : `${cred.server}/`;

  const raw = <T>(req: KubeRequest): Promise<KubeResult<T>> => {
    const url = new URL(req.path.replace(/^\//, ""), base);
    const payload = req.body === undefined ? undefined : JSON.stringify(req.body);
    const signal = req.signal ?? AbortSignal.timeout(req.timeoutMs ?? 30_000);
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(new KubeTransportError("TIMEOUT", `${req.method} ${url.pathname}: deadline passed`));
        return;
      }
      const r = request(
        url,
        {
          method: req.method,
          agent,
          signal,
          headers: {
            accept: "application/json",
            ...(cred.token ? { authorization: `Bearer ${cred.token}` } : {}),
            ...(payload === undefined
              ? {}
              : {
                  "content-type": req.contentType ?? "application/json",
                  "content-length": Buffer.byteLength(payload),
                }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let body: unknown = text;
            try {
              body = text ? JSON.parse(text) : undefined;
            } catch {
              // not JSON: keep the text
            }
            resolve({ status: res.statusCode ?? 0, body: body as T });
          });
          res.on("error", (e) => reject(transportError(e, req, url)));
        },
      );
      r.on("error", (e) => reject(transportError(e, req, url)));
      if (payload !== undefined) r.write(payload);
      r.end();
    });
  };

  return {
    server: cred.server,
    raw,
    async json<T>(req: KubeRequest): Promise<T> {
      const res = await raw<T>(req);
      if (res.status < 200 || res.status > 299) throw new KubeStatusError(req.method, req.path, res.status, res.body);
      return res.body;
    },
    close: () => agent.destroy(),
  };
}

function transportError(e: unknown, req: KubeRequest, url: URL): KubeTransportError {
  const err = e as NodeJS.ErrnoException & { name?: string };
  const aborted = err?.name === "AbortError" || err?.code === "ABORT_ERR" || req.signal?.aborted;
  const reason = aborted ? "TIMEOUT" : (err?.code ?? "UNKNOWN");
  const what = aborted ? "no answer before the deadline" : (err?.message ?? String(e));
  return new KubeTransportError(reason, `${req.method} ${url.host}${url.pathname}: ${what}`);
}

/** Path segment escaping for names that come from input (node names, pod names). */
export const seg = (s: string): string => encodeURIComponent(s);
