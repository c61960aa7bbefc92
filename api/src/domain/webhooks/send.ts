// One POST to a checked target: the connection goes to the address the guard checked (no second DNS
// lookup), TLS names the host (SNI, certificate check), redirects are answers, not followed, and only the
// first 4 KiB of the answer are read.
import { Agent, request } from "node:https";
import type { CheckedTarget } from "./ssrf.ts";

export const RESPONSE_BODY_LIMIT = 4096;

export interface SendResult {
  statusCode: number | null;
  body: string | null;
  error: string | null;
  retryAfter: string | undefined;
  latencyMs: number;
}

export function send(
  target: CheckedTarget,
  headers: Record<string, string>,
  body: string,
  o: { timeoutMs: number; ca?: string | undefined; agent?: Agent | undefined },
): Promise<SendResult> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: Omit<SendResult, "latencyMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...r, latencyMs: latency() });
    };
    const req = request(
      {
        host: target.hostname,
        port: target.url.port === "" ? 443 : Number(target.url.port),
        path: `${target.url.pathname}${target.url.search}`,
        method: "POST",
        headers: {
          ...headers,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "user-agent": "Berth-Webhooks/1",
        },
        // The checked address, whatever the resolver would say now.
        lookup: ((_h: string, opts: { all?: boolean }, cb: (...a: unknown[]) => void) => {
          if (opts?.all) cb(null, [{ address: target.address, family: target.family }]);
          else cb(null, target.address, target.family);
        }) as never,
        ...(o.ca ? { ca: o.ca } : {}),
        agent: o.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const finish = () =>
          done({
            statusCode: res.statusCode ?? null,
            body: Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString("utf8"),
            error: null,
            retryAfter: res.headers["retry-after"],
          });
        res.on("data", (c: Buffer) => {
          if (size < RESPONSE_BODY_LIMIT) chunks.push(c);
          size += c.length;
          if (size >= RESPONSE_BODY_LIMIT) {
            finish();
            res.destroy();
          }
        });
        res.on("end", finish);
        res.on("error", (err) =>
          done({ statusCode: res.statusCode ?? null, body: null, error: String(err), retryAfter: undefined }),
        );
      },
    );
    const timer = setTimeout(() => {
      done({ statusCode: null, body: null, error: `no answer within ${o.timeoutMs} ms`, retryAfter: undefined });
      req.destroy();
    }, o.timeoutMs);
    req.on("error", (err) => done({ statusCode: null, body: null, error: err.message, retryAfter: undefined }));
    req.end(body);
  });
}

/**
 * Keep-alive connections per checked target: keyed by host, port *and the checked address*, so a reused
 * connection always goes where the guard said, and a name that now resolves elsewhere gets a new pool.
 * (A TLS handshake per delivery cost more than everything else together: bench/src/webhooks-dispatch.ts.)
 */
export class TargetAgents {
  readonly #agents = new Map<string, Agent>();
  readonly #max: number;
  constructor(o: { maxTargets?: number; socketsPerTarget?: number } = {}) {
    this.#max = o.maxTargets ?? 256;
    this.#sockets = o.socketsPerTarget ?? 8;
  }
  readonly #sockets: number;

  for(t: CheckedTarget, ca?: string): Agent {
    const key = `${t.hostname}|${t.url.port}|${t.address}`;
    let a = this.#agents.get(key);
    if (a) {
      // Most recently used last: the oldest goes first when there are too many.
      this.#agents.delete(key);
      this.#agents.set(key, a);
      return a;
    }
    a = new Agent({
      keepAlive: true,
      maxSockets: this.#sockets,
      maxFreeSockets: this.#sockets,
      timeout: 30_000,
      ...(ca ? { ca } : {}),
    });
    this.#agents.set(key, a);
    if (this.#agents.size > this.#max) {
      const [oldest, agent] = this.#agents.entries().next().value as [string, Agent];
      this.#agents.delete(oldest);
      agent.destroy();
    }
    return a;
  }

  destroy(): void {
    for (const a of this.#agents.values()) a.destroy();
    this.#agents.clear();
  }
}
