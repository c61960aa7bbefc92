// CORS for an explicit list of origins; with none configured (the default) no CORS header is ever sent,
// which is right for the console served from the same origin.
import type { Middleware } from "koa";

export function corsMiddleware(allowOrigins: readonly string[]): Middleware {
  const allowed = new Set(allowOrigins);
  return async (ctx, next) => {
    if (allowed.size === 0) return next();
    const origin = ctx.get("Origin");
    if (!origin || !allowed.has(origin)) return next();
    ctx.set("Vary", "Origin");
    ctx.set("Access-Control-Allow-Origin", origin);
    ctx.set("Access-Control-Expose-Headers", "X-Request-Id, Idempotent-Replayed, Retry-After, Location");
    if (ctx.method === "OPTIONS" && ctx.get("Access-Control-Request-Method")) {
      ctx.set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE");
      ctx.set("Access-Control-Allow-Headers", "Authorization, Content-Type, Idempotency-Key, X-Request-Id");
      ctx.set("Access-Control-Max-Age", "600");
      ctx.status = 204;
      return;
    }
    return next();
  };
}
