import { SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { TokenExpired, Unauthorized } from "../../errors.ts";
import { OPERATOR_TOKEN_TTL_SECONDS, OperatorTokens } from "./operatorToken.ts";
import { generateSigningKeyPem, type SigningKey, signingKeyFromPem } from "./signingKey.ts";

let key: SigningKey;
let other: SigningKey;
beforeAll(async () => {
  [key, other] = await Promise.all([
    signingKeyFromPem(generateSigningKeyPem()),
    signingKeyFromPem(generateSigningKeyPem()),
  ]);
});

const clockAt = (iso: string) => {
  let now = new Date(iso).getTime();
  return { now: () => new Date(now), advance: (s: number) => (now += s * 1000) };
};

describe("operator tokens", () => {
  it("carry the contract's claims and verify to their cluster", async () => {
    const clock = clockAt("2026-11-22T12:00:00Z");
    const tokens = new OperatorTokens({ key, clock });
    const t = await tokens.issue("clu_abc123");
    expect(t.expiresAt.getTime() - t.issuedAt.getTime()).toBe(OPERATOR_TOKEN_TTL_SECONDS * 1000);
    const claims = await tokens.verify(t.token);
    expect(claims).toMatchObject({ clusterId: "clu_abc123", jti: t.jti });
    expect(tokens.jwks().keys[0]).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig", kid: key.kid });
    expect(tokens.jwks().keys[0]).not.toHaveProperty("d");
  });

  it("are expired one second after seven days, with token_expired", async () => {
    const clock = clockAt("2026-11-22T12:00:00Z");
    const tokens = new OperatorTokens({ key, clock });
    const t = await tokens.issue("clu_abc123");
    clock.advance(OPERATOR_TOKEN_TTL_SECONDS - 1);
    await expect(tokens.verify(t.token)).resolves.toBeTruthy();
    clock.advance(2);
    await expect(tokens.verify(t.token)).rejects.toBeInstanceOf(TokenExpired);
  });

  it("refuse another key, another audience, a non-operator subject and garbage as unauthenticated", async () => {
    const clock = clockAt("2026-11-22T12:00:00Z");
    const tokens = new OperatorTokens({ key, clock });
    const foreign = await new OperatorTokens({ key: other, clock }).issue("clu_abc123");
    const iat = Math.floor(clock.now().getTime() / 1000);
    const sign = (claims: { aud?: string; sub?: string }, kid = key.kid) =>
      new SignJWT({})
        .setProtectedHeader({ alg: "RS256", kid })
        .setIssuer("berth-control-plane")
        .setAudience(claims.aud ?? "berth-internal")
        .setSubject(claims.sub ?? "operator:clu_abc123")
        .setIssuedAt(iat)
        .setExpirationTime(iat + 60)
        .setJti("j")
        .sign(key.privateKey);
    for (const token of [
      foreign.token,
      await sign({ aud: "berth-public" }),
      await sign({ sub: "user:usr_1" }),
      "not.a.jwt",
    ]) {
      await expect(tokens.verify(token)).rejects.toBeInstanceOf(Unauthorized);
    }
    // Expired and for another audience: not token_expired, since the time is not the only thing wrong.
    const wrongAudience = await sign({ aud: "elsewhere" });
    clock.advance(3600);
    const err = await tokens.verify(wrongAudience).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Unauthorized);
    expect(err).not.toBeInstanceOf(TokenExpired);
  });
});
