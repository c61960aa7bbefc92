// User access tokens: HS256 JWTs signed with the configured secret (config `tokenSecret`).
//
// Lifetime: 15 minutes (ACCESS_TOKEN_TTL_SECONDS), no refresh token; the console signs in again. Short
// because the token is a bearer credential held in a browser; revocation before expiry comes from the
// `ver` claim, which the authenticator compares with the user's current token_version (bumped by a
// password change, a password reset and disabling the account).
import { randomBytes } from "node:crypto";
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;
const ISSUER = "berth";
const AUDIENCE = "berth-api";
const MIN_SECRET_BYTES = 32;
/** Tokens whose signature and claims were checked, kept until they expire (a console reuses one token). */
const VERIFIED_CACHE_SIZE = 10_000;

export interface AccessClaims {
  userId: string;
  tokenVersion: number;
}

export interface IssuedToken {
  token: string;
  expiresIn: number;
}

/** Why a token was refused; the authenticator maps both to 401, with different codes. */
export class TokenRejected extends Error {
  readonly reason: "expired" | "invalid";
  constructor(reason: "expired" | "invalid", message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface AccessTokensOptions {
  secret: string | Uint8Array;
  /** Injected clock (tests own it). */
  now?: () => Date;
  ttlSeconds?: number;
}

export class AccessTokens {
  readonly ttlSeconds: number;
  readonly #key: Uint8Array;
  readonly #now: () => Date;
  /**
   * Token text -> its claims and expiry, for tokens verified before. Only a token verified in full
   * enters, keyed by its whole text, so a hit needs the exact signed token. The `ver` revocation check
   * is the authenticator's, on every request, and does not depend on this. Insertion order makes the
   * Map a FIFO: past the size, the oldest entry goes.
   */
  readonly #verified = new Map<string, { claims: AccessClaims; expiresAtMs: number }>();

  constructor(opts: AccessTokensOptions) {
    this.#key = typeof opts.secret === "string" ? new TextEncoder().encode(opts.secret) : opts.secret;
    if (this.#key.length < MIN_SECRET_BYTES) throw new Error(`token secret must be at least ${MIN_SECRET_BYTES} bytes`);
    this.#now = opts.now ?? (() => new Date());
    this.ttlSeconds = opts.ttlSeconds ?? ACCESS_TOKEN_TTL_SECONDS;
  }

  async issue(claims: AccessClaims): Promise<IssuedToken> {
    const iat = Math.floor(this.#now().getTime() / 1000);
    const token = await new SignJWT({ ver: claims.tokenVersion, typ: "access" })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject(claims.userId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.ttlSeconds)
      .setJti(randomBytes(12).toString("base64url"))
      .sign(this.#key);
    return { token, expiresIn: this.ttlSeconds };
  }

  async verify(token: string): Promise<AccessClaims> {
    const known = this.#verified.get(token);
    if (known !== undefined) {
      // jose refuses a token whose `exp` is not after now (clock tolerance 0); the same here.
      if (this.#now().getTime() < known.expiresAtMs) return known.claims;
      this.#verified.delete(token);
      throw new TokenRejected("expired", "the access token has expired");
    }
    try {
      const { payload } = await jwtVerify(token, this.#key, {
        algorithms: ["HS256"],
        issuer: ISSUER,
        audience: AUDIENCE,
        currentDate: this.#now(),
        requiredClaims: ["sub", "exp", "iat", "ver"],
        clockTolerance: 0,
      });
      if (payload.typ !== "access" || typeof payload.sub !== "string" || !Number.isInteger(payload.ver)) {
        throw new TokenRejected("invalid", "not an access token");
      }
      const claims = Object.freeze({ userId: payload.sub, tokenVersion: payload.ver as number });
      this.#remember(token, claims, (payload.exp as number) * 1000);
      return claims;
    } catch (err) {
      if (err instanceof TokenRejected) throw err;
      if (err instanceof joseErrors.JWTExpired) throw new TokenRejected("expired", "the access token has expired");
      throw new TokenRejected("invalid", "the access token is not valid");
    }
  }

  #remember(token: string, claims: AccessClaims, expiresAtMs: number): void {
    if (this.#verified.size >= VERIFIED_CACHE_SIZE) {
      const oldest = this.#verified.keys().next().value;
      if (oldest !== undefined) this.#verified.delete(oldest);
    }
    this.#verified.set(token, { claims, expiresAtMs });
  }
}
