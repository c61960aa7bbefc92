// The typed API client. Every request and response type comes from openapi.gen.ts, generated from the
// API's OpenAPI document: call("getSession", { params: { sessionId } }) is checked against the contract.
import type { ErrorEnvelope, Operations } from "./openapi.gen.ts";
import { OPERATIONS } from "./openapi.gen.ts";

export type OperationId = keyof Operations & keyof typeof OPERATIONS;
export type ApiErrorCode = ErrorEnvelope["error"]["code"];
/** Codes the client makes up when there is no envelope to read. */
export type ClientErrorCode = "network_error" | "bad_response" | "aborted";

type IsEmpty<T> = [T] extends [Record<string, never>] ? true : [keyof T] extends [never] ? true : false;
type HasRequired<T> = IsEmpty<T> extends true ? false : Partial<T> extends T ? false : true;

/** What call() takes for an operation: params when the path has any, body when the route takes one. */
export type RequestInput<K extends OperationId> = (HasRequired<Operations[K]["params"]> extends true
  ? { params: Operations[K]["params"] }
  : { params?: Operations[K]["params"] }) &
  (HasRequired<Operations[K]["query"]> extends true
    ? { query: Operations[K]["query"] }
    : { query?: Operations[K]["query"] }) &
  (Operations[K]["body"] extends undefined ? { body?: undefined } : { body: Operations[K]["body"] });

export type ResponseOf<K extends OperationId> = Operations[K]["response"];
export type BodyOf<K extends OperationId> = Operations[K]["body"];
export type QueryOf<K extends OperationId> = Operations[K]["query"];

export interface CallOptions {
  signal?: AbortSignal;
  /** Sent as Idempotency-Key (creating writes): a retry of the same intent reuses the key. */
  idempotencyKey?: string;
}

/** An API failure as the console shows it: the envelope's message and request id, always. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ApiErrorCode | ClientErrorCode;
  readonly details: Record<string, unknown>;
  readonly requestId: string | undefined;
  readonly timestamp: string | undefined;
  constructor(init: {
    status: number;
    code: ApiErrorCode | ClientErrorCode;
    message: string;
    details?: Record<string, unknown>;
    requestId?: string;
    timestamp?: string;
  }) {
    super(init.message);
    this.name = "ApiError";
    this.status = init.status;
    this.code = init.code;
    this.details = init.details ?? {};
    this.requestId = init.requestId;
    this.timestamp = init.timestamp;
  }
}

export function isEnvelope(v: unknown): v is ErrorEnvelope {
  const e = (v as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return !!e && typeof e.code === "string" && typeof e.message === "string";
}

/** Fills :params of a Koa-style path and appends the query (arrays repeat the key; undefined is left out). */
export function buildUrl(
  path: string,
  params: Record<string, unknown> = {},
  query: Record<string, unknown> = {},
): string {
  const filled = path.replace(
    /:([A-Za-z0-9_]+)|\{([A-Za-z0-9_]+)\}/g,
    (_m, a: string | undefined, b: string | undefined) => {
      const name = (a ?? b) as string;
      const v = params[name];
      if (v === undefined || v === null || v === "") throw new Error(`missing path parameter ${name} for ${path}`);
      return encodeURIComponent(String(v));
    },
  );
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === "") continue;
    if (Array.isArray(v)) for (const x of v) qs.append(k, String(x));
    else qs.append(k, String(v));
  }
  const s = qs.toString();
  return s ? `${filled}?${s}` : filled;
}

export interface ApiClientOptions {
  baseUrl?: string;
  /** The current bearer token, read on every call. */
  token: () => string | undefined;
  /** Called for 401 (expired or revoked token) and 403 password_change_required on a signed-in call. */
  onAuthFailure?: (err: ApiError) => void;
  fetch?: typeof fetch;
}

export class ApiClient {
  readonly #opts: ApiClientOptions;
  constructor(opts: ApiClientOptions) {
    this.#opts = opts;
  }

  get baseUrl(): string {
    return this.#opts.baseUrl ?? "";
  }

  authHeaders(): Record<string, string> {
    const t = this.#opts.token();
    return t ? { Authorization: `Bearer ${t}` } : {};
  }

  async call<K extends OperationId>(
    op: K,
    ...[input, options]: Partial<RequestInput<K>> extends RequestInput<K>
      ? [RequestInput<K>?, CallOptions?]
      : [RequestInput<K>, CallOptions?]
  ): Promise<ResponseOf<K>> {
    const { method, path } = OPERATIONS[op];
    const inp = (input ?? {}) as { params?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown };
    const url = this.baseUrl + buildUrl(path, inp.params, inp.query);
    const headers: Record<string, string> = { Accept: "application/json", ...this.authHeaders() };
    if (inp.body !== undefined) headers["Content-Type"] = "application/json";
    if (options?.idempotencyKey) headers["Idempotency-Key"] = options.idempotencyKey;
    return (await this.#send(
      url,
      {
        method: method.toUpperCase(),
        headers,
        body: inp.body === undefined ? undefined : JSON.stringify(inp.body),
        signal: options?.signal,
      },
      !!headers.Authorization,
    )) as ResponseOf<K>;
  }

  /** A raw GET for routes whose answer is not JSON (logs as text); errors still come as ApiError. */
  async fetchRaw(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = { ...this.authHeaders(), ...(init.headers as Record<string, string> | undefined) };
    let res: Response;
    try {
      res = await (this.#opts.fetch ?? fetch)(this.baseUrl + url, { ...init, headers });
    } catch (e) {
      throw networkError(e);
    }
    if (!res.ok) throw await this.#failure(res, !!headers.Authorization);
    return res;
  }

  async #send(url: string, init: RequestInit, signedIn: boolean): Promise<unknown> {
    let res: Response;
    try {
      res = await (this.#opts.fetch ?? fetch)(url, init);
    } catch (e) {
      throw networkError(e);
    }
    if (!res.ok) throw await this.#failure(res, signedIn);
    if (res.status === 204) return undefined;
    const text = await res.text();
    if (!text) return undefined;
    try {
      return JSON.parse(text);
    } catch {
      throw new ApiError({
        status: res.status,
        code: "bad_response",
        message: "The server answered something that is not JSON.",
        requestId: res.headers.get("X-Request-Id") ?? undefined,
      });
    }
  }

  async #failure(res: Response, signedIn: boolean): Promise<ApiError> {
    const requestId = res.headers.get("X-Request-Id") ?? undefined;
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      body = undefined;
    }
    const err = isEnvelope(body)
      ? new ApiError({
          status: res.status,
          code: body.error.code,
          message: body.error.message,
          details: body.error.details,
          requestId: body.error.request_id ?? requestId,
          timestamp: body.error.timestamp,
        })
      : new ApiError({
          status: res.status,
          code: "bad_response",
          message: `The server answered ${res.status} ${res.statusText}.`,
          requestId,
        });
    if (signedIn && (res.status === 401 || err.code === "password_change_required")) this.#opts.onAuthFailure?.(err);
    return err;
  }
}

function networkError(e: unknown): ApiError {
  if (e instanceof DOMException && e.name === "AbortError")
    return new ApiError({ status: 0, code: "aborted", message: "The request was cancelled." });
  return new ApiError({
    status: 0,
    code: "network_error",
    message: "The API cannot be reached. Check your connection; the console retries on its own.",
  });
}

/** A fresh Idempotency-Key for one user intent (one click of "Create"). */
export function newIdempotencyKey(): string {
  return crypto.randomUUID();
}
