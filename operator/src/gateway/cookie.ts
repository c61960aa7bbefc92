// The gateway's session cookie: the gateway verifies it on its own, with no call per request.
//
// Value: base64url(JSON claims) "." base64url(HMAC-SHA256(key, "berth-cnx-v1." + claims)). The key is
// the gateway's (configured for several replicas, generated at start for one); keys rotate by listing the
// new one first and the old one after it. Claims bind the cookie to one session (`s`, and `c` = the name
// in /proxy/{cr}/), one user (`u`) and this gateway's cluster (`k`); `e` is its expiry. The cookie is
// short-lived and renewed after half its life only after the control plane confirms the user may still
// use the session (see grant.ts), so a pause, a termination or a lost permission ends access within one
// lifetime even for a browser that never reloads.
import { createHmac, timingSafeEqual } from "node:crypto";

export const COOKIE_NAME = "berth_cnx";
const DOMAIN_SEPARATOR = "berth-cnx-v1.";

export interface CookieClaims {
  /** session id */
  s: string;
  /** session resource name, {cr} of the path */
  c: string;
  /** user id */
  u: string;
  /** cluster id of the gateway that issued it */
  k: string;
  /** issued at, epoch seconds */
  i: number;
  /** expires at, epoch seconds */
  e: number;
}

export function signCookie(claims: CookieClaims, key: Buffer): string {
  const body = Buffer.from(JSON.stringify(claims)).toString("base64url");
  return `${body}.${mac(key, body).toString("base64url")}`;
}

/**
 * Values whose signature already checked out, so a busy tab costs a Map lookup per request instead of an
 * HMAC. Only the signature is remembered: binding and expiry are checked on every request. Bounded.
 */
export class VerifiedCookies {
  readonly #map = new Map<string, CookieClaims>();
  readonly max: number;
  constructor(max = 50_000) {
    this.max = max;
  }
  get(value: string): CookieClaims | undefined {
    return this.#map.get(value);
  }
  set(value: string, claims: CookieClaims): void {
    if (this.#map.size >= this.max) this.#map.clear();
    this.#map.set(value, claims);
  }
}

/** Claims when `value` was signed by one of `keys` and parses; expiry and binding are checked by the caller. */
export function openCookie(value: string, keys: Buffer[], cache?: VerifiedCookies): CookieClaims | undefined {
  const hit = cache?.get(value);
  if (hit) return hit;
  const claims = openUncached(value, keys);
  if (claims) cache?.set(value, claims);
  return claims;
}

function openUncached(value: string, keys: Buffer[]): CookieClaims | undefined {
  const dot = value.indexOf(".");
  if (dot <= 0 || value.length > 4096) return undefined;
  const body = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1), "base64url");
  if (given.length !== 32) return undefined;
  if (!keys.some((k) => timingSafeEqual(mac(k, body), given))) return undefined;
  try {
    const c = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as Partial<CookieClaims>;
    if (typeof c.s !== "string" || typeof c.c !== "string" || typeof c.u !== "string" || typeof c.k !== "string")
      return undefined;
    if (typeof c.i !== "number" || typeof c.e !== "number") return undefined;
    return c as CookieClaims;
  } catch {
    return undefined;
  }
}

export interface CookieCheck {
  cr: string;
  clusterId: string;
  nowSeconds: number;
}

export type CookieVerdict =
  | { ok: true; claims: CookieClaims; renew: boolean }
  | { ok: false; why: "absent" | "bad" | "expired" | "elsewhere" };

/** A request's Cookie header as the gateway reads it. */
export interface ReadCookies {
  /** The `berth_cnx` values whose signature checked out, in header order. */
  claims: CookieClaims[];
  /** Whether the header held any `berth_cnx` value, valid or not. */
  present: boolean;
  /** The header without `berth_cnx`, as the session's application gets it; undefined when nothing is left. */
  forwarded: string | undefined;
}

const NO_COOKIES: ReadCookies = { claims: [], present: false, forwarded: undefined };

/**
 * Cookie headers already read: a browser sends the same header on every request, so a busy tab costs one
 * Map lookup for it, instead of splitting it twice (our cookie out, the rest forwarded) and looking its
 * value up. Holds only headers with a validly signed `berth_cnx` (junk is not worth a slot), and only the
 * signature's verdict: binding and expiry are judged on every request (`verdictOn`). Bounded.
 */
export class CookieHeaders {
  readonly #map = new Map<string, ReadCookies>();
  readonly #verified = new VerifiedCookies();
  readonly #keys: Buffer[];
  readonly max: number;
  constructor(keys: Buffer[], max = 10_000) {
    this.#keys = keys;
    this.max = max;
  }
  read(header: string | undefined): ReadCookies {
    if (!header) return NO_COOKIES;
    const hit = this.#map.get(header);
    if (hit) return hit;
    const values = cookieValues(header, COOKIE_NAME);
    if (values.length === 0) return { claims: [], present: false, forwarded: withoutCookie(header, COOKIE_NAME) };
    const claims: CookieClaims[] = [];
    for (const v of values) {
      const c = openCookie(v, this.#keys, this.#verified);
      if (c) claims.push(c);
    }
    const read = { claims, present: true, forwarded: withoutCookie(header, COOKIE_NAME) };
    // Long headers are read every time: a slot is not worth their memory.
    if (claims.length > 0 && header.length <= 4096) {
      if (this.#map.size >= this.max) this.#map.clear();
      this.#map.set(header, read);
    }
    return read;
  }
}

/**
 * The verdict on a read Cookie header for /proxy/{cr}/. Several `berth_cnx` values may arrive (an old and a
 * new one, or one per path when paths nest): any valid one for this cr and cluster wins.
 */
export function verdictOn(read: ReadCookies, want: CookieCheck): CookieVerdict {
  // Binding and expiry: judged on every request, never cached.
  if (!read.present) return { ok: false, why: "absent" };
  let why: "bad" | "expired" | "elsewhere" = "bad";
  for (const c of read.claims) {
    if (c.c !== want.cr || c.k !== want.clusterId) {
      why = "elsewhere";
      continue;
    }
    if (c.e <= want.nowSeconds) {
      why = "expired";
      continue;
    }
    const life = c.e - c.i;
    return { ok: true, claims: c, renew: c.e - want.nowSeconds < life / 2 };
  }
  return { ok: false, why };
}

/** Every value of `name` in a Cookie header (RFC 6265 §5.4 order; duplicates kept). */
export function cookieValues(header: string | undefined, name: string): string[] {
  if (!header) return [];
  const out: string[] = [];
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) out.push(part.slice(eq + 1).trim());
  }
  return out;
}

/** The Cookie header without our cookie: the session's code never sees the gateway's credential. */
export function withoutCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  const kept = header
    .split(";")
    .map((p) => p.trim())
    .filter((p) => p && p.slice(0, Math.max(0, p.indexOf("="))).trim() !== name);
  return kept.length ? kept.join("; ") : undefined;
}

export interface SetCookieOptions {
  cr: string;
  maxAgeSeconds: number;
  secure: boolean;
}

/**
 * HttpOnly (no script reads it), SameSite=Lax, Path=/proxy/{cr}/ (sent only for this session), no Domain
 * (host-only: the session domain alone), Secure over TLS.
 *
 * Why Lax and not Strict: the user arrives by a cross-site navigation (the console is on another host) and
 * the gateway answers with a redirect. Browsers treat the whole redirect chain as cross-site, so a Strict
 * cookie set by the first response is not sent with the redirected request and the user would land on
 * "not signed in". Lax is sent on top-level GET navigations and withheld from cross-site subresources,
 * forms and WebSocket handshakes, which is the CSRF protection we want; the gateway also checks Origin on
 * WebSocket upgrades.
 */
export function setCookieHeader(value: string, o: SetCookieOptions): string {
  return [
    `${COOKIE_NAME}=${value}`,
    `Path=/proxy/${o.cr}/`,
    `Max-Age=${o.maxAgeSeconds}`,
    "HttpOnly",
    "SameSite=Lax",
    ...(o.secure ? ["Secure"] : []),
  ].join("; ");
}

export function clearCookieHeader(o: { cr: string; secure: boolean }): string {
  return [
    `${COOKIE_NAME}=`,
    `Path=/proxy/${o.cr}/`,
    "Max-Age=0",
    "HttpOnly",
    "SameSite=Lax",
    ...(o.secure ? ["Secure"] : []),
  ].join("; ");
}

function mac(key: Buffer, body: string): Buffer {
  return createHmac("sha256", key).update(DOMAIN_SEPARATOR).update(body).digest();
}
