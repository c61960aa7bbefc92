import { decodeJwt, decodeProtectedHeader } from "jose";
import { describe, expect, it } from "vitest";
import { TestClock } from "../../http/http.test-support.ts";
import { ACCESS_TOKEN_TTL_SECONDS, AccessTokens, TokenRejected } from "./tokens.ts";

const secret = "a-test-secret-of-at-least-32-bytes!!";

describe("access tokens", () => {
  it("are HS256 JWTs for 15 minutes by default, carrying the user and its token version", async () => {
    const clock = new TestClock();
    const tokens = new AccessTokens({ secret, now: () => clock.now() });
    const { token, expiresIn } = await tokens.issue({ userId: "usr_1", tokenVersion: 3 });
    expect(expiresIn).toBe(ACCESS_TOKEN_TTL_SECONDS);
    expect(ACCESS_TOKEN_TTL_SECONDS).toBe(900);
    expect(decodeProtectedHeader(token).alg).toBe("HS256");
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ sub: "usr_1", ver: 3, iss: "berth", aud: "berth-api" });
    expect(Number(claims.exp) - Number(claims.iat)).toBe(900);
    expect(await tokens.verify(token)).toEqual({ userId: "usr_1", tokenVersion: 3 });
  });

  it("expire: verify says expired, not invalid", async () => {
    const clock = new TestClock();
    const tokens = new AccessTokens({ secret, now: () => clock.now() });
    const { token } = await tokens.issue({ userId: "usr_1", tokenVersion: 0 });
    clock.advance(900);
    const err = await tokens.verify(token).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TokenRejected);
    expect((err as TokenRejected).reason).toBe("expired");
  });

  it("from another secret are invalid, and a short secret is refused", async () => {
    const a = new AccessTokens({ secret });
    const b = new AccessTokens({ secret: `${secret}-other` });
    const { token } = await a.issue({ userId: "usr_1", tokenVersion: 0 });
    const err = await b.verify(token).catch((e: unknown) => e);
    expect((err as TokenRejected).reason).toBe("invalid");
    expect(() => new AccessTokens({ secret: "short" })).toThrow(/32 bytes/);
  });

  it("verified once, still expire on time, and a token differing in any character is checked in full", async () => {
    const clock = new TestClock();
    const tokens = new AccessTokens({ secret, now: () => clock.now() });
    const { token } = await tokens.issue({ userId: "usr_1", tokenVersion: 2 });
    expect(await tokens.verify(token)).toEqual({ userId: "usr_1", tokenVersion: 2 });
    // A character in the middle of the signature changed (the last one may carry only padding bits).
    const at = token.length - 10;
    const forged = token.slice(0, at) + (token[at] === "A" ? "B" : "A") + token.slice(at + 1);
    expect(((await tokens.verify(forged).catch((e: unknown) => e)) as TokenRejected).reason).toBe("invalid");
    clock.advance(899);
    expect(await tokens.verify(token)).toEqual({ userId: "usr_1", tokenVersion: 2 });
    clock.advance(1);
    for (let i = 0; i < 2; i++) {
      const err = await tokens.verify(token).catch((e: unknown) => e);
      expect((err as TokenRejected).reason).toBe("expired");
    }
  });
});
