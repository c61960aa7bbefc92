// Prometheus metrics of the HTTP layer. One registry per app (not prom-client's global one), so tests
// can build several apps in one process.
import type { Middleware } from "koa";
import { Counter, collectDefaultMetrics, Histogram, Registry } from "prom-client";

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<"method" | "route" | "status">;
  httpDuration: Histogram<"method" | "route" | "status">;
  auditWriteFailures: Counter;
  sessionAdmissionBatch: Histogram;
}

export function createMetrics(opts: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Counter({
      name: "berth_http_requests_total",
      help: "HTTP requests answered, by route template, method and status",
      labelNames: ["method", "route", "status"],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: "berth_http_request_duration_seconds",
      help: "HTTP request latency, by route template, method and status",
      labelNames: ["method", "route", "status"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    auditWriteFailures: new Counter({
      name: "berth_audit_write_failures_total",
      help: "Audit rows that could not be written (the request itself was answered)",
      registers: [registry],
    }),
    sessionAdmissionBatch: new Histogram({
      name: "berth_session_admission_batch_size",
      help: "Session creates decided per hold of an organization's quota door (domain/sessions/admission.ts)",
      buckets: [1, 2, 4, 8, 16, 32, 64],
      registers: [registry],
    }),
  };
}

/**
 * Counts and times every request. The route label is the matched template (/api/v1/projects/:projectId),
 * never the raw path, so the label set stays bounded; anything unmatched is "unmatched".
 */
export function metricsMiddleware(metrics: Metrics): Middleware {
  // One child per label set, kept: no label object and no timer closure per request (prom-client still
  // hashes the labels inside). The set is bounded: route templates, the methods Node's parser accepts, the
  // statuses.
  type Children = { duration: { observe(v: number): void }; count: { inc(): void } };
  const children = new Map<string, Map<number, Children>>();
  const childrenFor = (method: string, route: string, status: number): Children => {
    const key = method === "GET" ? route : `${method} ${route}`;
    let byStatus = children.get(key);
    if (byStatus === undefined) {
      byStatus = new Map();
      children.set(key, byStatus);
    }
    let c = byStatus.get(status);
    if (c === undefined) {
      const labels = { method, route, status: String(status) };
      c = { duration: metrics.httpDuration.labels(labels), count: metrics.httpRequests.labels(labels) };
      byStatus.set(status, c);
    }
    return c;
  };
  return async (ctx, next) => {
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? "unmatched";
      const c = childrenFor(ctx.method, route, ctx.status);
      c.duration.observe(Number(process.hrtime.bigint() - start) / 1e9);
      c.count.inc();
    }
  };
}
