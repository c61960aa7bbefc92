// The one client's two kinds of failure: the API refused (KubeError, an HTTP answer with its status) or
// there was no answer (KubeTransportError: refused, reset, DNS, TLS, deadline). Registration and the
// connection test tell them apart; so do the reconcilers (a status is a value, a socket error a retry).
/** The API refused: an HTTP answer outside 2xx. `reason` and `statusMessage` come from its Status object. */
export class KubeError extends Error {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly reason: string | undefined;
  readonly statusMessage: string | undefined;
  constructor(method: string, path: string, status: number, body: unknown) {
    const s = (typeof body === "object" && body !== null ? body : {}) as { message?: unknown; reason?: unknown };
    const reason = s.reason === undefined ? undefined : String(s.reason);
    const message = s.message === undefined ? undefined : String(s.message);
    super(`${method} ${path}: ${status}${reason ? ` ${reason}` : ""}${message ? `: ${message}` : ""}`);
    this.name = "KubeError";
    this.method = method;
    this.path = path;
    this.status = status;
    this.reason = reason;
    this.statusMessage = message;
  }
}

/**
 * No HTTP answer: refused, reset, DNS, TLS, or the deadline passed. `reason` is the socket's or TLS's code
 * (ECONNREFUSED, ENOTFOUND, DEPTH_ZERO_SELF_SIGNED_CERT, ...), TIMEOUT for a deadline, ABORTED for a
 * caller's abort, UNKNOWN otherwise; `code` keeps the socket's code for code that classifies by it.
 */
export class KubeTransportError extends Error {
  readonly reason: string;
  readonly code: string | undefined;
  constructor(reason: string, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "KubeTransportError";
    this.reason = reason;
    this.code = (cause as NodeJS.ErrnoException | undefined)?.code;
  }
}

/** A deadline's abort (AbortSignal.timeout) rather than a caller giving up. */
export const isDeadline = (signal: AbortSignal | undefined) =>
  (signal?.reason as { name?: string } | undefined)?.name === "TimeoutError";

export function transportError(
  e: unknown,
  method: string,
  url: URL,
  signal: AbortSignal | undefined,
): KubeTransportError {
  if (e instanceof KubeTransportError) return e;
  const err = e as NodeJS.ErrnoException;
  const where = `${method} ${url.host}${url.pathname}`;
  if (signal?.aborted) {
    return isDeadline(signal)
      ? new KubeTransportError("TIMEOUT", `${where}: no answer before the deadline`, e)
      : new KubeTransportError("ABORTED", `${where}: ${err?.message ?? String(e)}`, e);
  }
  return new KubeTransportError(err?.code ?? "UNKNOWN", `${where}: ${err?.message ?? String(e)}`, e);
}

/** An error as a log field: message and, for apiserver answers, the status; for sockets, the code. */
export function errInfo(e: unknown): { message: string; status?: number; code?: string } {
  if (e instanceof KubeError) return { message: e.message, status: e.status };
  if (e instanceof KubeTransportError) return { message: e.message, code: e.reason };
  if (e instanceof Error) {
    const code = (e as NodeJS.ErrnoException).code;
    return code ? { message: e.message, code } : { message: e.message };
  }
  return { message: String(e) };
}

export function isStatus(e: unknown, ...codes: number[]): boolean {
  return e instanceof KubeError && codes.includes(e.status);
}
