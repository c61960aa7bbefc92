// The one place errors become HTTP. Everything the public listener answers with a status >= 400 goes
// through here and comes out as the contract's envelope:
//   {error: {code, message, details, request_id, timestamp}}
import { randomFillSync } from "node:crypto";
import { KubeError } from "@berth/controllers/kube";
import type { Context, Middleware } from "koa";
import type { Logger } from "pino";
import { z } from "zod";
import type { Clock } from "../clock.ts";
import { isDatabaseUnreachable } from "../db/unreachable.ts";
import { DomainError, ERROR_CODE_LIST, ERROR_CODES, type ErrorCode, type ErrorDetails } from "../errors.ts";

export const REQUEST_ID_HEADER = "X-Request-Id";
/** A caller's own id is kept when it is this sane; anything else is replaced by ours. */
const INCOMING_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export const ErrorEnvelope = z
  .object({
    error: z.object({
      code: z
        .enum(ERROR_CODE_LIST as [ErrorCode, ...ErrorCode[]])
        .meta({ description: "Stable error code; clients map it to a message." }),
      message: z.string().meta({ description: "Human-readable text." }),
      details: z.record(z.string(), z.unknown()).meta({
        description: "What to fix. For validation_failed: issues[] of {path, message, code}.",
      }),
      request_id: z.string().meta({ description: "The request's id, also in the X-Request-Id header." }),
      timestamp: z.string().meta({ description: "When the error was answered (RFC 3339, UTC)." }),
    }),
  })
  .meta({ id: "ErrorEnvelope", description: "The error envelope of every public error." });
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

/** Random bytes drawn 256 ids at a time: one call into the CSPRNG per request showed in the list's profile. */
const ID_BYTES = 12;
const idPool = Buffer.alloc(ID_BYTES * 256);
let idNext = idPool.length;

export function newRequestId(): string {
  if (idNext === idPool.length) {
    randomFillSync(idPool);
    idNext = 0;
  }
  const id = idPool.toString("base64url", idNext, idNext + ID_BYTES);
  idNext += ID_BYTES;
  return `req_${id}`;
}

export function requestIdOf(ctx: Context): string {
  return (ctx.state as { requestId?: string }).requestId ?? "unknown";
}

/** Outermost: gives the request an id (the caller's, when sane) and echoes it on every response. */
export function requestIdMiddleware(): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get(REQUEST_ID_HEADER);
    const id = INCOMING_REQUEST_ID.test(incoming) ? incoming : newRequestId();
    ctx.state.requestId = id;
    ctx.set(REQUEST_ID_HEADER, id);
    await next();
  };
}

export function envelopeBody(
  code: ErrorCode,
  message: string,
  details: ErrorDetails,
  requestId: string,
  now: Date,
): ErrorEnvelope {
  return { error: { code, message, details, request_id: requestId, timestamp: now.toISOString() } };
}

/** Errors from Koa or its helpers (http-errors) carry a status; give them our code for that status. */
function codeForStatus(status: number): ErrorCode {
  switch (status) {
    case 400:
      return "bad_request";
    case 401:
      return "unauthenticated";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 405:
    case 501:
      return "method_not_allowed";
    case 409:
      return "conflict";
    case 413:
      return "payload_too_large";
    case 415:
      return "unsupported_media_type";
    case 429:
      return "too_many_requests";
    case 503:
      return "unavailable";
    default:
      return status >= 400 && status < 500 ? "bad_request" : "internal";
  }
}

export interface ErrorAnswer {
  status: number;
  body: ErrorEnvelope;
  headers: Record<string, string>;
}

const logOf = (logger: Logger | (() => Logger)): Logger => (typeof logger === "function" ? logger() : logger);

/**
 * Maps anything thrown to a status and envelope. A database that cannot be reached is 503 unavailable
 * (the caller may retry; logged as a warning); any other unexpected error is 500 internal, its stack
 * logged, not sent. `logger` may be a function giving the logger: it is then called only to log.
 */
export function errorAnswer(
  err: unknown,
  requestId: string,
  clock: Clock,
  logger: Logger | (() => Logger),
): ErrorAnswer {
  const now = clock.now();
  if (err instanceof DomainError) {
    return {
      status: err.status,
      body: envelopeBody(err.code, err.message, err.details, requestId, now),
      headers: err.headers,
    };
  }
  const status =
    typeof err === "object" && err !== null && "status" in err ? Number((err as { status: unknown }).status) : 500;
  const expose = typeof err === "object" && err !== null && (err as { expose?: unknown }).expose === true;
  if (Number.isInteger(status) && status >= 400 && status < 500 && expose) {
    const code = codeForStatus(status);
    return {
      status: ERROR_CODES[code].status,
      body: envelopeBody(code, (err as Error).message, {}, requestId, now),
      headers: {},
    };
  }
  if (err instanceof KubeError && (err.status === 401 || err.status === 403)) {
    logOf(logger).error({ err, requestId }, "Kubernetes refused Berth's own credential");
    const resource = resourceOfPath(err.path);
    return {
      status: 500,
      body: envelopeBody(
        "kubernetes_refused",
        `Kubernetes refused Berth's own credential (${err.status}) to ${err.method} ${resource}: the installation's RBAC lacks a grant; tell an administrator`,
        { method: err.method, resource, status: err.status },
        requestId,
        now,
      ),
      headers: {},
    };
  }
  if (isDatabaseUnreachable(err)) {
    logOf(logger).warn({ err, requestId }, "database unreachable");
    return {
      status: 503,
      body: envelopeBody("unavailable", "the database is not reachable right now; retry later", {}, requestId, now),
      headers: {},
    };
  }
  logOf(logger).error({ err, requestId }, "unexpected error");
  return {
    status: 500,
    body: envelopeBody("internal", "internal error; it was logged under the request id", {}, requestId, now),
    headers: {},
  };
}

/**
 * The resource a Kubernetes path is about, without the names in it (`sessions.berth.dev`, `pods/log`), so
 * the answer says what grant is missing and nothing of other tenants' objects.
 */
export function resourceOfPath(path: string): string {
  const parts = path.split("?")[0]?.split("/").filter(Boolean) ?? [];
  const group = parts[0] === "apis" ? parts[1] : undefined;
  let rest = parts.slice(parts[0] === "apis" ? 3 : 2);
  if (rest[0] === "namespaces" && rest.length > 2) rest = rest.slice(2);
  const plural = rest[0] ?? "namespaces";
  const sub = rest[2];
  return `${plural}${group ? `.${group}` : ""}${sub ? `/${sub}` : ""}`;
}

/** Something below set an error status without a body (the router's 404/405/501): name it. */
function unansweredError(ctx: Context): DomainError {
  if (ctx.status === 404)
    return new DomainError("not_found", `no route for ${ctx.method} ${ctx.path}`, {
      method: ctx.method,
      path: ctx.path,
    });
  if (ctx.status === 405 || ctx.status === 501) {
    const allow = ctx.response.get("Allow");
    return new DomainError(
      "method_not_allowed",
      `${ctx.method} is not allowed on ${ctx.path}`,
      { method: ctx.method, allowed: allow ? allow.split(/,\s*/) : [] },
      allow ? { Allow: allow } : {},
    );
  }
  const code = codeForStatus(ctx.status);
  return new DomainError(code, ERROR_CODES[code].description);
}

/**
 * Catches everything below it and answers with the envelope; also turns "nothing answered" into 404
 * not_found. A handler that deliberately answers an error status sets an envelope itself (none should).
 */
export function errorEnvelopeMiddleware(opts: { clock: Clock; log: Logger }): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body == null && ctx.status >= 400) throw unansweredError(ctx);
    } catch (err) {
      const a = errorAnswer(err, requestIdOf(ctx), opts.clock, opts.log);
      // Headers set on the way down (e.g. Allow by the router) stay; ours are added.
      for (const [k, v] of Object.entries(a.headers)) ctx.set(k, v);
      ctx.status = a.status;
      ctx.body = a.body;
      if (a.status === 413) ctx.set("Connection", "close");
    }
  };
}
