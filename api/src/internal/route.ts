// Declaring a route of the internal plane. Smaller than the public layer's defineRoute on purpose: no
// user principal, no idempotency keys, no audit row per operator report (reports are high-volume
// machine traffic; the rows they write are their record), and not in the public OpenAPI document —
// docs/dev/internal-api.md is their contract.
import type { Context } from "koa";
import type { Logger } from "pino";
import type { z } from "zod";
import type { Deps } from "../deps.ts";
import { Invalid, type ValidationIssue } from "../errors.ts";
import { readJsonBody } from "../http/body.ts";
import { requestIdOf } from "../http/envelope.ts";
import { issuesOf } from "../http/requestParts.ts";
import { assertOwnCluster, authenticateOperator, type OperatorPrincipal } from "./operatorAuth.ts";

export type InternalAuth = "operator" | "none";

export interface InternalHandlerContext<A extends InternalAuth, Q, B> {
  deps: Deps;
  operator: A extends "operator" ? OperatorPrincipal : undefined;
  query: Q;
  body: B;
  requestId: string;
  log: Logger;
  ctx: Context;
}

export interface InternalRoute<
  A extends InternalAuth = InternalAuth,
  QS extends z.ZodType | undefined = z.ZodType | undefined,
  BS extends z.ZodType | undefined = z.ZodType | undefined,
> {
  method: "get" | "put" | "post";
  /** Under /internal/ or /.well-known/ only. */
  path: string;
  auth: A;
  query?: QS;
  body?: BS;
  handler: (
    c: InternalHandlerContext<
      A,
      QS extends z.ZodType ? z.output<QS> : undefined,
      BS extends z.ZodType ? z.output<BS> : undefined
    >,
  ) => Promise<{ status: number; body: unknown; headers?: Record<string, string> }>;
}

// biome-ignore lint/suspicious/noExplicitAny: the erased form kept in lists; handlers stay typed where defined.
export type AnyInternalRoute = InternalRoute<InternalAuth, any, any>;

export function defineInternalRoute<
  A extends InternalAuth,
  QS extends z.ZodType | undefined = undefined,
  BS extends z.ZodType | undefined = undefined,
>(r: InternalRoute<A, QS, BS>): InternalRoute<A, QS, BS> {
  if (!/^\/(internal|\.well-known)\//.test(r.path))
    throw new Error(`${r.path}: internal routes live under /internal/ or /.well-known/`);
  return r;
}

/** Operator inventories are large (500 nodes with their labels and devices): a limit of their own. */
export const INTERNAL_BODY_LIMIT_BYTES = 32 * 1024 * 1024;

export function internalRouteMiddleware(route: AnyInternalRoute, deps: Deps) {
  return async (ctx: Context): Promise<void> => {
    const requestId = requestIdOf(ctx);
    const operator = route.auth === "operator" ? await authenticateOperator(deps, ctx) : undefined;
    const log = deps.log.child({ requestId, route: route.path, ...(operator ? { cluster: operator.clusterId } : {}) });
    const issues: ValidationIssue[] = [];
    let query: unknown;
    if (route.query) {
      const r = route.query.safeParse({ ...ctx.query });
      if (r.success) query = r.data;
      else issues.push(...issuesOf(r.error, "query"));
    }
    if (issues.length > 0) throw new Invalid("the request is invalid", issues);
    let body: unknown;
    if (route.body) {
      const r = route.body.safeParse(
        await readJsonBody(ctx, Math.max(deps.config.http.bodyLimitBytes, INTERNAL_BODY_LIMIT_BYTES)),
      );
      if (r.success) body = r.data;
      else issues.push(...issuesOf(r.error, "body"));
    }
    if (issues.length > 0) throw new Invalid("the request is invalid", issues);
    // Every operator report names its cluster: one for another cluster than the token's is refused here,
    // before its handler writes anything.
    const named = (body as { cluster_id?: unknown } | undefined)?.cluster_id;
    if (operator && typeof named === "string") assertOwnCluster(operator, named);
    const answer = await route.handler({ deps, operator, query, body, requestId, log, ctx } as never);
    for (const [k, v] of Object.entries(answer.headers ?? {})) ctx.set(k, v);
    ctx.status = answer.status;
    ctx.body = answer.body;
  };
}
