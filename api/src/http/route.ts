// The typed-route layer (docs/dev/api-layer.md, docs/adr/0002-own-typed-route-layer.md). One declaration
// gives a route its validation, types, OpenAPI entry, authentication, audit row and idempotency.
// The parts: here, the declaration (defineRoute) and the middleware that runs it (routeMiddleware);
// requestParts.ts parses the request's parts, authenticate.ts finds the caller, droppedField.ts catches a
// presenter's leak in the response check, idempotency.ts and audit.ts keep their records.
import type Router from "@koa/router";
import type { Context } from "koa";
import type { Logger } from "pino";
import type { z } from "zod";
import { isDatabaseUnreachable } from "../db/unreachable.ts";
import type { Deps } from "../deps.ts";
import type { Principal } from "../domain/identity/principal.ts";
import { DomainError, type ErrorCode, Invalid, type ValidationIssue } from "../errors.ts";
import { AuditCollector, type AuditHandle, writeAudit } from "./audit.ts";
import { authenticate } from "./authenticate.ts";
import { readJsonBody } from "./body.ts";
import { clientAddressOf } from "./clientAddress.ts";
import { droppedField } from "./droppedField.ts";
import { errorAnswer, requestIdOf } from "./envelope.ts";
import {
  claimIdempotencyKey,
  claimSeed,
  completeIdempotencyKey,
  IDEMPOTENCY_HEADER,
  IDEMPOTENCY_KEY_PATTERN,
  type IdempotencyClaim,
  REPLAYED_HEADER,
  releaseIdempotencyKey,
  requestHash,
  type StoredAnswer,
} from "./idempotency.ts";
import type { AuthMode } from "./principal.ts";
import { issuesOf, parsePart, queryObject } from "./requestParts.ts";
import { isStreamAnswer, type StreamAnswer, writeStreamAnswer } from "./streams.ts";

export type Method = "get" | "post" | "put" | "patch" | "delete";
export type { AuthMode } from "./principal.ts";

type Schema = z.ZodType;
type Responses = { [status: number]: Schema };
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/**
 * What a handler answers: one of its declared statuses, with a body of that status' schema; or a CSV file,
 * server-sent events or a followed text stream (http/streams.ts), which the layer writes.
 */
export type HandlerResult<R extends Responses> =
  | {
      [S in keyof R & number]: { status: S; body: z.input<R[S]>; headers?: Record<string, string> };
    }[keyof R & number]
  | StreamAnswer;

export interface HandlerContext<A extends AuthMode, P, Q, B> {
  deps: Deps;
  /** Set for "user" and "password-change" routes; undefined on "public" ones. */
  principal: A extends "public" ? undefined : Principal;
  params: P;
  query: Q;
  body: B;
  requestId: string;
  audit: AuditHandle;
  log: Logger;
  /** The Koa context, for the rare route that reads the raw request (headers, its close); answers go
   * through the result (http/streams.ts for the ones that are not JSON). */
  ctx: Context;
  /**
   * Set when the request holds an Idempotency-Key claim: `seed` is the same for this request and one that
   * takes the key over after a crash (`tookOver`), so a create can name what it makes from it.
   */
  idempotency?: { seed: string; tookOver: boolean };
}

export interface RouteSpec<
  A extends AuthMode = AuthMode,
  PS extends Schema | undefined = Schema | undefined,
  QS extends Schema | undefined = Schema | undefined,
  BS extends Schema | undefined = Schema | undefined,
  R extends Responses = Responses,
> {
  method: Method;
  /** Koa-style path params: /api/v1/projects/:projectId (OpenAPI gets {projectId}). */
  path: string;
  operationId: string;
  tags: string[];
  summary: string;
  description?: string;
  auth: A;
  params?: PS;
  query?: QS;
  body?: BS;
  /** Honours Idempotency-Key (creating writes). Needs an authenticated caller: keys are per caller. */
  idempotent?: boolean;
  /** Audit action (e.g. "project.create"); required for every method but GET. */
  audit?: string;
  /**
   * What the audit row keeps of the body when not the body itself: a file of people's data (an import's
   * CSV) is summarised, so the log does not become a second copy of it. Applies to refused calls too.
   */
  auditBody?: NoInfer<(body: Out<BS>) => unknown>;
  /** Documented answers; the error answers are added to the OpenAPI document automatically. */
  responses: R;
  /**
   * The refusals the handler itself may answer, beyond the layer's own (validation, authentication, 404
   * on a path parameter, idempotency, 503: http/openapi.ts adds those): each code goes into the OpenAPI
   * document under its status. The fuzzing test and the bad-input sweep fail on a status not documented.
   */
  errors?: readonly ErrorCode[];
  /**
   * Media types of the success answer when it is not only JSON (CSV exports, event streams, followed
   * logs), each with the schema of its body: the OpenAPI document lists these instead of application/json.
   */
  produces?: Readonly<Record<string, z.ZodType>>;
  /** A larger JSON body than the server's default (BERTH_BODY_LIMIT_BYTES) for this route alone (an import's file). */
  bodyLimitBytes?: number;
  /** Leave out of the OpenAPI document (test-only routes). */
  hidden?: boolean;
  /**
   * Answers from the process alone: no database, no cluster (liveness, the OpenAPI document). Every
   * other route may answer 503 `unavailable` when a dependency is unreachable, and its OpenAPI entry
   * says so.
   */
  selfContained?: boolean;
  // NoInfer: the schemas above decide the types; the handler is then checked against them. (A handler
  // without parameters is checked before they are known and loses its literals: write `async (_) =>`.)
  handler: NoInfer<(c: HandlerContext<A, Out<PS>, Out<QS>, Out<BS>>) => Promise<HandlerResult<R>>>;
}

/** A route of any shape, as kept in lists (routes/index.ts, contract.ts). */
// biome-ignore lint/suspicious/noExplicitAny: the erased form of every RouteSpec; handlers stay typed at definition.
export type RouteDef = RouteSpec<AuthMode, any, any, any, any>;

/** Declares a route; checks the declaration's own consistency at load time. */
export function defineRoute<
  A extends AuthMode,
  R extends Responses,
  PS extends Schema | undefined = undefined,
  QS extends Schema | undefined = undefined,
  BS extends Schema | undefined = undefined,
>(spec: RouteSpec<A, PS, QS, BS, R>): RouteSpec<A, PS, QS, BS, R> {
  const where = `${spec.method.toUpperCase()} ${spec.path}`;
  if (spec.method !== "get" && !spec.audit) throw new Error(`${where}: a mutating route needs an audit action`);
  if (spec.idempotent && spec.auth === "public")
    throw new Error(`${where}: idempotency keys are per caller; a public route cannot be idempotent`);
  if (spec.idempotent && spec.method === "get") throw new Error(`${where}: GET is idempotent by nature`);
  if (Object.keys(spec.responses).length === 0) throw new Error(`${where}: declare at least one response`);
  return spec;
}

/**
 * Checks an answer against the route's declared schema for that status. A presenter that returns a
 * field the schema does not declare (a leaked column) is an error, not silently stripped: the point is
 * to catch it in tests. Costs a parse per response; config.http.validateResponses turns it off.
 */
function checkResponse(route: RouteDef, answer: StoredAnswer): void {
  const where = `${route.method.toUpperCase()} ${route.path} -> ${answer.status}`;
  const schema = (route.responses as Responses)[answer.status];
  if (!schema) throw new Error(`${where}: status not declared in responses`);
  if (answer.status === 204) return;
  const r = schema.safeParse(answer.body);
  if (!r.success)
    throw new Error(`${where}: body does not match its schema: ${JSON.stringify(issuesOf(r.error, "response"))}`);
  const dropped = droppedField(answer.body, r.data);
  if (dropped) throw new Error(`${where}: body has ${dropped}, which its schema does not declare (a presenter leak)`);
}

function send(ctx: Context, answer: StoredAnswer, replayed: boolean): void {
  for (const [k, v] of Object.entries(answer.headers)) ctx.set(k, v);
  if (replayed) ctx.set(REPLAYED_HEADER, "true");
  ctx.status = answer.status;
  ctx.body = answer.status === 204 ? null : (answer.body ?? null);
  if (answer.status !== 204 && answer.body === undefined) ctx.body = null;
  if (answer.status !== 204) ctx.type = "application/json";
}

function statusOf(err: unknown): { status: number; code?: string } {
  if (err instanceof DomainError) return { status: err.status, code: err.code };
  if (isDatabaseUnreachable(err)) return { status: 503, code: "unavailable" };
  const s =
    typeof err === "object" && err !== null && "status" in err ? Number((err as { status: unknown }).status) : 500;
  return { status: Number.isInteger(s) && s >= 400 && s < 600 ? s : 500, code: undefined };
}

/** The Koa middleware for one route: auth, validation, idempotency, handler, response check, audit. */
export function routeMiddleware(route: RouteDef, deps: Deps) {
  const template = route.path;
  const method = route.method.toUpperCase();
  return async (ctx: Context): Promise<void> => {
    const requestId = requestIdOf(ctx);
    // Made on first use: most requests never log, and a pino child per request showed in the list's profile.
    let child: Logger | undefined;
    const logger = (): Logger => {
      child ??= deps.log.child({ requestId, route: template, method });
      return child;
    };
    const audit = new AuditCollector();
    // Read now: once an oversized body has been cut off, the socket may be gone. Behind trusted proxies,
    // the client they forwarded (clientAddress.ts), as the sign-in throttle sees it.
    const sourceIp = clientAddressOf(ctx);
    let principal: Principal | undefined;
    let thrown: { status: number; code?: string } | undefined;
    try {
      principal = await authenticate(deps, ctx, route.auth);

      const issues: ValidationIssue[] = [];
      const params = parsePart(route.params, ctx.params ?? {}, "params", issues);
      const query = parsePart(route.query, queryObject(ctx), "query", issues);
      const key = route.idempotent ? ctx.get(IDEMPOTENCY_HEADER) : "";
      // A header sent empty is a bad key, not an absent one (the fuzzer found it passed as "no key").
      const sent = route.idempotent && ctx.request.headers[IDEMPOTENCY_HEADER.toLowerCase()] !== undefined;
      if (sent && !IDEMPOTENCY_KEY_PATTERN.test(key)) {
        issues.push({
          path: ["headers", IDEMPOTENCY_HEADER],
          message: "must be 1-255 characters of A-Z a-z 0-9 . _ : ~ + / = -",
          code: "invalid_format",
        });
      }
      // Parameters and query are checked before the body is read: no reading megabytes for a bad id.
      if (issues.length > 0) throw new Invalid("the request is invalid", issues);
      const body = route.body
        ? parsePart(
            route.body,
            await readJsonBody(ctx, route.bodyLimitBytes ?? deps.config.http.bodyLimitBytes),
            "body",
            issues,
          )
        : undefined;
      if (issues.length > 0) throw new Invalid("the request is invalid", issues);
      audit.requestBody = body !== undefined && route.auditBody ? route.auditBody(body as never) : body;

      let claim: IdempotencyClaim | undefined;
      if (key !== "" && principal) {
        const idem = deps.config.idempotency;
        const scope = `${principal.userId} ${method} ${template}`;
        const r = await claimIdempotencyKey(deps.db, scope, key, requestHash({ params, query, body }), {
          now: deps.clock.now(),
          retentionSeconds: idem.retentionSeconds,
          inFlightTimeoutSeconds: idem.inFlightTimeoutSeconds,
        });
        if (r.kind === "replay") {
          audit.detail("idempotent_replay", true);
          send(ctx, r.answer, true);
          return;
        }
        claim = r.claim;
        if (claim.tookOver) logger().warn({ idempotencyKey: key }, "took over an idempotency key left in flight");
      }

      // The handler's own errors become answers here (not in the outer envelope middleware) so the exact
      // body sent is the one stored for replay.
      let answer: StoredAnswer;
      let streamed = false;
      try {
        const result = await route.handler({
          deps,
          principal,
          params,
          query,
          body,
          requestId,
          audit,
          get log() {
            return logger();
          },
          ctx,
          ...(claim ? { idempotency: { seed: claimSeed(claim), tookOver: claim.tookOver } } : {}),
        } as never);
        if (isStreamAnswer(result)) {
          if (claim) throw new Error(`${method} ${template}: a streamed answer cannot be stored for a replay`);
          streamed = true;
          await writeStreamAnswer(ctx, result);
          answer = { status: 200, body: undefined, headers: {} };
        } else {
          answer = { status: result.status, body: result.body, headers: result.headers ?? {} };
          if (deps.config.http.validateResponses) checkResponse(route, answer);
        }
      } catch (err) {
        const a = errorAnswer(err, requestId, deps.clock, logger);
        answer = { status: a.status, body: a.body, headers: a.headers };
      }
      if (claim) {
        // Unexpected failures are not remembered: the same key may be retried. Decided outcomes are.
        if (answer.status >= 500) await releaseIdempotencyKey(deps.db, claim);
        else if (!(await completeIdempotencyKey(deps.db, claim, answer)))
          logger().warn({ idempotencyKey: key }, "idempotency key was taken over before completion");
      }
      // A stream that failed half-way has sent its 200 already (and was cut off); the failure is logged.
      if (!streamed) send(ctx, answer, false);
    } catch (err) {
      thrown = statusOf(err);
      throw err; // answered by the envelope middleware
    } finally {
      const status = thrown?.status ?? ctx.status;
      // Mutating routes are audited always; any route records a refusal of its caller (403) as denied.
      if (route.audit || status === 403) {
        const sentCode = (ctx.body as { error?: { code?: string } } | null)?.error?.code;
        const errorCode = status >= 400 ? (thrown?.code ?? sentCode ?? "internal") : undefined;
        await writeAudit(
          deps,
          audit.record({
            action: route.audit ?? route.operationId,
            principal,
            requestId,
            sourceIp,
            status,
            at: deps.clock.now(),
            ...(errorCode ? { errorCode } : {}),
          }),
        );
      }
    }
  };
}

/** Mounts routes on a @koa/router instance. */
export function mountRoutes(router: Router, routes: readonly RouteDef[], deps: Deps): void {
  const seen = new Set<string>();
  for (const route of routes) {
    const id = `${route.method} ${route.path}`;
    if (seen.has(id)) throw new Error(`route declared twice: ${id}`);
    seen.add(id);
    router[route.method](route.path, routeMiddleware(route, deps));
  }
  const ops = new Set<string>();
  for (const route of routes) {
    if (ops.has(route.operationId)) throw new Error(`operationId used twice: ${route.operationId}`);
    ops.add(route.operationId);
  }
}
