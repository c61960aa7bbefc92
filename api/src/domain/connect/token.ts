// Connect tokens: what a connect link carries as `svc_cnx=<token>`.
//
// - 256 bits from the OS CSPRNG (node:crypto randomBytes), base64url, with a `cnx_` prefix so secret
//   scanners and humans recognise one in a paste.
// - Stored only as SHA-256. With 256 random bits there is nothing to brute-force, so a slow password hash
//   would only cost latency; a keyed hash would add a key to manage for no gain.
// - Never logged: nothing in this folder logs a token, and `redactToken` is what to print instead.
import { createHash, randomBytes } from "node:crypto";

export const CONNECT_TOKEN_PREFIX = "cnx_";
export const CONNECT_TOKEN_BYTES = 32;
/** Upper bound of a token's life; the database refuses longer (connect_tokens_ttl_at_most_60s). */
export const CONNECT_TOKEN_MAX_TTL_SECONDS = 60;
export const CONNECT_TOKEN_DEFAULT_TTL_SECONDS = 60;

/** Shape check before touching the database: prefix + 43 base64url characters. */
const SHAPE = /^cnx_[A-Za-z0-9_-]{43}$/;

export function newConnectToken(): string {
  return CONNECT_TOKEN_PREFIX + randomBytes(CONNECT_TOKEN_BYTES).toString("base64url");
}

export function isConnectTokenShaped(s: string): boolean {
  return SHAPE.test(s);
}

export function hashConnectToken(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

/** What may appear in a log line instead of a token: its hash's first 8 hex digits. */
export function redactToken(token: string): string {
  return `cnx_…${hashConnectToken(token).subarray(0, 4).toString("hex")}`;
}
