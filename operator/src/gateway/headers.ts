// Header hygiene between the browser and the session's application, both ways, on raw header lists
// ([name, value, name, value, …], as node:http and undici give and take them): one pass per message, no
// header object built per request (that object, and validating it again header by header, was a visible
// share of the proxy's CPU per request).

/** Hop-by-hop headers (RFC 9110 §7.6.1) and `expect` (the gateway's server answers 100-continue itself). */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect",
]);

/** Set by the gateway alone: whatever the client sent under these names is dropped. */
const OURS = new Set(["x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "x-forwarded-prefix"]);

/** Names listed in Connection headers are hop-by-hop too. */
function connectionTokens(raw: readonly string[]): Set<string> | undefined {
  let out: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if ((raw[i] as string).length !== 10 || (raw[i] as string).toLowerCase() !== "connection") continue;
    out ??= new Set();
    for (const t of (raw[i + 1] as string).split(",")) {
      const name = t.trim().toLowerCase();
      if (name) out.add(name);
    }
  }
  return out;
}

export interface ForwardedFor {
  /** The address the request came from (the TCP peer). */
  remote: string;
  /** Whether the browser reached the gateway over TLS (here or in front of it). */
  secure: boolean;
  cr: string;
  /**
   * The request's Cookie headers as the gateway read them (cookie.ts' CookieHeaders, which takes its own
   * cookie out): sent as this one header, in place of the first.
   */
  cookies: { forwarded: string | undefined };
}

/**
 * The request's headers as the session's application gets them: hop-by-hop headers dropped, the gateway's
 * cookie taken out of every Cookie header (the session's code never sees the credential), X-Forwarded-For
 * extended, X-Forwarded-Proto, -Host and -Prefix (/proxy/{cr}) set by the gateway alone.
 */
export function forwardedRequestHeaders(raw: readonly string[], f: ForwardedFor): string[] {
  const dropAlso = connectionTokens(raw);
  const out: string[] = [];
  let prior: string | undefined;
  let host: string | undefined;
  let cookieSent = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    const value = raw[i + 1] as string;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || dropAlso?.has(lower)) continue;
    if (OURS.has(lower)) {
      if (lower === "x-forwarded-for") prior = prior === undefined ? value : `${prior}, ${value}`;
      continue;
    }
    if (lower === "cookie") {
      const kept = cookieSent ? undefined : f.cookies.forwarded;
      cookieSent = true;
      if (kept !== undefined) out.push(name, kept);
      continue;
    }
    if (lower === "host") host = value;
    out.push(name, value);
  }
  out.push("X-Forwarded-For", prior ? `${prior}, ${f.remote}` : f.remote);
  out.push("X-Forwarded-Proto", f.secure ? "https" : "http");
  if (host !== undefined) out.push("X-Forwarded-Host", host);
  out.push("X-Forwarded-Prefix", `/proxy/${f.cr}`);
  return out;
}

/**
 * The upstream's response headers as the browser gets them: hop-by-hop headers dropped (node:http frames
 * the body again), Set-Cookie pinned to the session's own path (`pinCookie`), and `extraCookie` (a renewed
 * gateway cookie) added. `raw` values may be Buffers (undici), read as latin1, byte for byte.
 */
export function responseHeaders(raw: ReadonlyArray<string | Buffer>, cr: string, extraCookie?: string): string[] {
  const names = raw.map((v) => (typeof v === "string" ? v : v.toString("latin1")));
  const dropAlso = connectionTokens(names);
  const out: string[] = [];
  for (let i = 0; i < names.length; i += 2) {
    const name = names[i] as string;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || dropAlso?.has(lower)) continue;
    const value = names[i + 1] as string;
    out.push(name, lower === "set-cookie" ? pinCookie(value, cr) : value);
  }
  if (extraCookie) out.push("Set-Cookie", extraCookie);
  return out;
}

/**
 * An upstream Set-Cookie with its Path pinned under /proxy/{cr}/ and its Domain dropped: one session
 * cannot plant cookies for another session, or for the gateway, on the shared host.
 */
export function pinCookie(v: string, cr: string): string {
  const parts = v.split(";").map((p) => p.trim());
  const prefix = `/proxy/${cr}/`;
  const kept = parts.filter((p, i) => i === 0 || !/^(path|domain)\s*=/i.test(p));
  const path = parts
    .find((p) => /^path\s*=/i.test(p))
    ?.split("=")[1]
    ?.trim();
  kept.push(`Path=${path?.startsWith(prefix) ? path : prefix}`);
  return kept.join("; ");
}

/** Every Cookie header of a raw list joined with "; " (as node:http joins them), or undefined. */
export function cookieHeader(raw: readonly string[]): string | undefined {
  let out: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const n = raw[i] as string;
    if (n.length !== 6 || n.toLowerCase() !== "cookie") continue;
    out = out === undefined ? (raw[i + 1] as string) : `${out}; ${raw[i + 1]}`;
  }
  return out;
}

/** Whether a request has a body to forward (RFC 9112 §6.3: Content-Length or Transfer-Encoding). */
export function carriesBody(raw: readonly string[]): boolean {
  for (let i = 0; i < raw.length; i += 2) {
    const n = (raw[i] as string).toLowerCase();
    if (n === "transfer-encoding") return true;
    if (n === "content-length") return raw[i + 1] !== "0";
  }
  return false;
}
