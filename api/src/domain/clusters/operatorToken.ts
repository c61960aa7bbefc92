// Operator tokens (docs/dev/internal-api.md): RS256 JWTs signed with the control plane's signing key,
// `iss: berth-control-plane`, `aud: berth-internal`, `sub: operator:<cluster_id>`, `iat`, `exp = iat +
// 604800`, `jti`, `kid` in the header. Whether a verified token is still the cluster's current one
// (rotation revokes the previous token) is the caller's check: see internal/operatorAuth.ts.
import { randomBytes } from "node:crypto";
import { decodeJwt, decodeProtectedHeader, errors, type JWK, jwtVerify, SignJWT } from "jose";
import { TokenExpired, Unauthorized } from "../../errors.ts";
import type { SigningKey } from "./signingKey.ts";

export const OPERATOR_TOKEN_ISSUER = "berth-control-plane";
export const OPERATOR_TOKEN_AUDIENCE = "berth-internal";
export const OPERATOR_TOKEN_TTL_SECONDS = 604_800;
const SUBJECT = /^operator:(clu_[a-z0-9]{1,59})$/;

export interface IssuedOperatorToken {
  token: string;
  clusterId: string;
  jti: string;
  kid: string;
  issuedAt: Date;
  expiresAt: Date;
}

export interface OperatorClaims {
  clusterId: string;
  jti: string;
  issuedAt: Date;
  expiresAt: Date;
}

export interface JsonWebKeySet {
  keys: JWK[];
}

export class OperatorTokens {
  readonly #key: SigningKey;
  readonly #clock: { now(): Date };
  readonly #ttlSeconds: number;

  constructor(opts: { key: SigningKey; clock: { now(): Date }; ttlSeconds?: number }) {
    this.#key = opts.key;
    this.#clock = opts.clock;
    this.#ttlSeconds = opts.ttlSeconds ?? OPERATOR_TOKEN_TTL_SECONDS;
  }

  get kid(): string {
    return this.#key.kid;
  }

  async issue(clusterId: string): Promise<IssuedOperatorToken> {
    const iat = Math.floor(this.#clock.now().getTime() / 1000);
    const exp = iat + this.#ttlSeconds;
    const jti = `otk_${randomBytes(16).toString("base64url")}`;
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: "RS256", kid: this.#key.kid, typ: "JWT" })
      .setIssuer(OPERATOR_TOKEN_ISSUER)
      .setAudience(OPERATOR_TOKEN_AUDIENCE)
      .setSubject(`operator:${clusterId}`)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .setJti(jti)
      .sign(this.#key.privateKey);
    return {
      token,
      clusterId,
      jti,
      kid: this.#key.kid,
      issuedAt: new Date(iat * 1000),
      expiresAt: new Date(exp * 1000),
    };
  }

  /**
   * A valid operator token's claims. 401 `token_expired` when the token is ours and only its time is
   * wrong; 401 `unauthenticated` for anything else (a user token, another key or audience, garbage).
   */
  async verify(token: string): Promise<OperatorClaims> {
    const refuse = (why: string) => new Unauthorized(`a valid operator token is required (${why})`);
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      throw refuse("not a JWT");
    }
    if (header.alg !== "RS256") throw refuse("not RS256");
    if (header.kid !== this.#key.kid) throw refuse("unknown key id");
    const options = {
      issuer: OPERATOR_TOKEN_ISSUER,
      audience: OPERATOR_TOKEN_AUDIENCE,
      algorithms: ["RS256"],
      requiredClaims: ["sub", "jti", "iat", "exp"],
    };
    try {
      const { payload } = await jwtVerify(token, this.#key.publicKey, { ...options, currentDate: this.#clock.now() });
      const m = SUBJECT.exec(payload.sub ?? "");
      if (!m?.[1]) throw refuse("subject is not operator:<cluster_id>");
      return {
        clusterId: m[1],
        jti: String(payload.jti),
        issuedAt: new Date((payload.iat ?? 0) * 1000),
        expiresAt: new Date((payload.exp ?? 0) * 1000),
      };
    } catch (e) {
      if (e instanceof Unauthorized) throw e;
      if (e instanceof errors.JWTExpired) {
        // Expired: say so only when everything but the time is right.
        const iat = decodeJwt(token).iat ?? 0;
        try {
          await jwtVerify(token, this.#key.publicKey, { ...options, currentDate: new Date(iat * 1000) });
        } catch {
          throw refuse("invalid claims");
        }
        throw new TokenExpired(
          "the operator token has expired; issue a new one with POST /api/v1/clusters/{cluster_id}/operator-token",
        );
      }
      throw refuse(e instanceof errors.JOSEError ? e.code : "invalid");
    }
  }

  jwks(): JsonWebKeySet {
    return { keys: [{ ...this.#key.publicJwk }] };
  }
}
