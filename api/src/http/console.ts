// Serves the built console from the API process: static assets from a directory (the console's build,
// config.console.dir) and the SPA fallback (index.html for deep links such as /sessions/abc), without
// ever shadowing the API's own paths. The API knows the console only as files: whoever builds them
// (npm start, `npm run build -w console`, an image build) puts them there.
//
// A plain (ctx, next) middleware shaped like Koa's:
//   app.use(serveConsole({ dist }));   // in api/src/app.ts, after the router
import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { extname, join, normalize, sep } from "node:path";

/** The part of Koa's context this middleware uses. */
export interface ConsoleContext {
  method: string;
  path: string;
  status: number;
  body: unknown;
  get(field: string): string;
  set(field: string, value: string): void;
  type: string;
}

export interface ServeConsoleOptions {
  /** Folder of the build. */
  dist: string;
  /** Paths that belong to the API and are never answered by the console. */
  reserved?: readonly string[];
}

/** Never served by the console, whatever is in dist: the API, probes, metrics and the operator plane. */
export const RESERVED_PREFIXES = ["/api", "/healthz", "/metrics", "/internal", "/.well-known"] as const;

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2",
};

// What the console needs and nothing more: its own scripts and styles (Lit adopts constructed
// stylesheets, index.html has one inline style), data: icons, and the API on the same origin.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join("; ");

interface CachedFile {
  body: Buffer;
  gzip?: Buffer;
  etag: string;
  mtimeMs: number;
}

export function isReservedPath(path: string, reserved: readonly string[] = RESERVED_PREFIXES): boolean {
  return reserved.some((p) => path === p || path.startsWith(`${p}/`) || path.startsWith(`${p}?`));
}

export function serveConsole(opts: ServeConsoleOptions) {
  const dist = normalize(opts.dist);
  const reserved = opts.reserved ?? RESERVED_PREFIXES;
  const cache = new Map<string, CachedFile>();

  function load(file: string): CachedFile | undefined {
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(file);
    } catch {
      return undefined;
    }
    if (!st.isFile()) return undefined;
    const hit = cache.get(file);
    if (hit && hit.mtimeMs === st.mtimeMs) return hit;
    const body = readFileSync(file);
    const gz = `${file}.gz`;
    const entry: CachedFile = {
      body,
      etag: `"${createHash("sha1").update(body).digest("base64url").slice(0, 22)}"`,
      mtimeMs: st.mtimeMs,
      ...(existsSync(gz) ? { gzip: readFileSync(gz) } : {}),
    };
    cache.set(file, entry);
    return entry;
  }

  return async function consoleMiddleware(ctx: ConsoleContext, next: () => Promise<unknown>): Promise<void> {
    if ((ctx.method !== "GET" && ctx.method !== "HEAD") || isReservedPath(ctx.path, reserved)) {
      await next();
      return;
    }
    let rel: string;
    try {
      rel = decodeURIComponent(ctx.path);
    } catch {
      await next();
      return;
    }
    const file = normalize(join(dist, rel));
    const inside = file === dist || file.startsWith(dist + sep);
    const asset = inside && !rel.endsWith("/") ? load(file) : undefined;
    let served: { f: CachedFile; name: string } | undefined = asset ? { f: asset, name: file } : undefined;
    if (!served) {
      // A path with an extension is a missing file (404 from the API's handler). Anything else is a route
      // of the single-page app and gets index.html, but only for a browser asking for a page: a program
      // (Accept without text/html) still gets the API's JSON 404 for a path that does not exist.
      if ((extname(rel) !== "" && extname(rel) !== ".html") || !/\btext\/html\b/.test(ctx.get("Accept"))) {
        await next();
        return;
      }
      const index = load(join(dist, "index.html"));
      if (!index) {
        ctx.status = 503;
        ctx.type = "text/plain; charset=utf-8";
        ctx.body = "The console is not built. Run `npm run build -w console` (npm start and npm test build it).\n";
        return;
      }
      served = { f: index, name: "index.html" };
    }
    const { f, name } = served;
    const isIndex = name.endsWith("index.html");
    ctx.set("ETag", f.etag);
    ctx.set("X-Content-Type-Options", "nosniff");
    ctx.set("Vary", "Accept-Encoding");
    // Hashed file names under /assets never change; everything else is revalidated.
    ctx.set("Cache-Control", rel.startsWith("/assets/") ? "public, max-age=31536000, immutable" : "no-cache");
    if (isIndex) {
      ctx.set("Content-Security-Policy", CSP);
      ctx.set("Referrer-Policy", "same-origin");
    }
    if (ctx.get("If-None-Match") === f.etag) {
      ctx.status = 304;
      ctx.body = null;
      return;
    }
    ctx.status = 200;
    ctx.type = TYPES[extname(name)] ?? "application/octet-stream";
    if (f.gzip && /\bgzip\b/.test(ctx.get("Accept-Encoding"))) {
      ctx.set("Content-Encoding", "gzip");
      ctx.body = f.gzip;
    } else {
      ctx.body = f.body;
    }
  };
}
