// Calls to the control plane's internal plane. One call is one attempt: the caller owns the retry loop,
// because what to retry with is a level (the latest inventory), not the body that failed.
//
// The operator token is read from its file on every attempt, so replacing the file (a rotated token, a
// re-registration) takes effect at the next attempt without a restart.
import { readFile } from "node:fs/promises";
import { type BackoffPolicy, backoffDelay } from "../backoff.ts";

export type Outcome =
  | { ok: true; status: number; body: unknown }
  | {
      ok: false;
      /**
       * unauthorized: 401, the token is expired or not the control plane's — retried with backoff, a new
       *   token file is picked up.
       * forbidden: 403, the token names another cluster, or the internal plane is closed to this address.
       * rejected: another 4xx; the body is wrong, retrying the same body cannot help.
       * unavailable: 5xx, 429, a timeout or a network error.
       * no_token: the token file is missing, unreadable or empty.
       */
      kind: "unauthorized" | "forbidden" | "rejected" | "unavailable" | "no_token";
      /** The HTTP status, or `network` / `no_token`: the label of the reports metric. */
      status: string;
      code?: string;
      /** The envelope's `details`, when the control plane sent one. */
      details?: Record<string, unknown>;
      message: string;
    };

export interface InternalClientOptions {
  /** The control plane's internal listener, e.g. http://127.0.0.1:8081 */
  baseUrl: string;
  tokenFile: string;
  timeoutMs: number;
}

export class InternalClient {
  readonly #o: InternalClientOptions;

  constructor(opts: InternalClientOptions) {
    this.#o = { ...opts, baseUrl: opts.baseUrl.replace(/\/+$/, "") };
  }

  async #token(): Promise<string> {
    return (await readFile(this.#o.tokenFile, "utf8")).trim();
  }

  async call(method: string, path: string, body: unknown, signal?: AbortSignal): Promise<Outcome> {
    let token: string;
    try {
      token = await this.#token();
    } catch (e) {
      return {
        ok: false,
        kind: "no_token",
        status: "no_token",
        message: `token file ${this.#o.tokenFile}: ${(e as Error).message}`,
      };
    }
    if (token === "")
      return { ok: false, kind: "no_token", status: "no_token", message: `token file ${this.#o.tokenFile} is empty` };
    const timeout = AbortSignal.timeout(this.#o.timeoutMs);
    let res: Response;
    let text: string;
    try {
      res = await fetch(this.#o.baseUrl + path, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(body),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      text = await res.text();
    } catch (e) {
      const err = e as Error & { cause?: { code?: string; message?: string } };
      const detail = err.cause?.code ?? err.cause?.message ?? err.name;
      return {
        ok: false,
        kind: "unavailable",
        status: "network",
        message: `${err.message}${detail ? ` (${detail})` : ""}`,
      };
    }
    let parsed: unknown = text;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      // keep the text: a proxy's error page says more than nothing
    }
    if (res.ok) return { ok: true, status: res.status, body: parsed };
    const envelope = (
      parsed as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | undefined
    )?.error;
    const message = envelope?.message ?? (typeof parsed === "string" ? parsed.slice(0, 300) : res.statusText);
    const base = {
      ok: false as const,
      status: String(res.status),
      message,
      ...(envelope?.code ? { code: envelope.code } : {}),
      ...(envelope?.details && typeof envelope.details === "object" ? { details: envelope.details } : {}),
    };
    if (res.status === 401) return { ...base, kind: "unauthorized" };
    if (res.status === 403) return { ...base, kind: "forbidden" };
    if (res.status === 429 || res.status >= 500) return { ...base, kind: "unavailable" };
    return { ...base, kind: "rejected" };
  }
}

/**
 * How long to wait before the next attempt after `failures` failures in a row ending in `outcome`.
 * Transient failures and 401 (a token that a file replacement may fix) back off exponentially; 403 and
 * other refusals, which the same request cannot fix, wait the full cap every time — never a hot loop.
 */
export function retryDelay(
  outcome: Extract<Outcome, { ok: false }>,
  failures: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  if (outcome.kind === "forbidden" || outcome.kind === "rejected")
    return backoffDelay(Number.MAX_SAFE_INTEGER, policy, random);
  return backoffDelay(failures, policy, random);
}
