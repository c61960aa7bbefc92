import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type IdentityTestApi, startIdentityTestApi } from "../../domain/identity/identity.test-support.ts";

describe("signing in and the password endpoints", () => {
  let t: IdentityTestApi;
  beforeAll(async () => {
    t = await startIdentityTestApi();
  });
  afterAll(async () => {
    await t?.stop();
  });

  const login = (email: string, password: string) =>
    t.request("POST", "/api/v1/auth/login", { json: { email, password } });

  it("answers a bearer token, its lifetime, the password-change flag and the user", async () => {
    const u = await t.aUser();
    const r = await login(u.email, u.password);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      access_token: expect.any(String),
      token_type: "bearer",
      expires_in: 900,
      must_change_password: false,
      user: { id: u.id, email: u.email },
    });
    const me = await t.request("GET", "/api/v1/auth/me", { token: r.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: u.id, email: u.email, memberships: [] });
  });

  it("matches the email whatever its case and surrounding spaces", async () => {
    const u = await t.aUser({ email: "Mixed.Case@Example.test".toLowerCase() });
    const r = await login("  MIXED.case@EXAMPLE.test ", u.password);
    expect(r.status).toBe(200);
  });

  it("answers a wrong password and an unknown email alike: 401 invalid_credentials", async () => {
    const u = await t.aUser();
    const wrong = await login(u.email, "not the password at all");
    const unknown = await login(`nobody-${Date.now()}@example.test`, "not the password at all");
    for (const r of [wrong, unknown]) {
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe("invalid_credentials");
      expect(Object.keys(r.body.error).sort()).toEqual(["code", "details", "message", "request_id", "timestamp"]);
    }
    expect(wrong.body.error.message).toBe(unknown.body.error.message);
    expect(wrong.body.error.details).toEqual(unknown.body.error.details);
  });

  it("refuses a disabled account like a wrong password", async () => {
    const u = await t.aUser({ disabled: true });
    const r = await login(u.email, u.password);
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("invalid_credentials");
  });

  it("refuses a malformed body with 400 validation_failed naming the fields", async () => {
    const r = await t.request("POST", "/api/v1/auth/login", { json: { email: 42 } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("validation_failed");
    const paths = r.body.error.details.issues.map((i: { path: string[] }) => i.path.join("."));
    expect(paths).toEqual(expect.arrayContaining(["body.email", "body.password"]));
    const bad = await t.request("POST", "/api/v1/auth/login", { body: "{not json" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("malformed_json");
  });

  it("throttles after 5 failures for one account from one address: 429 with Retry-After, even for the right password", async () => {
    const u = await t.aUser();
    for (let i = 0; i < 5; i++) expect((await login(u.email, `wrong password ${i}`)).status).toBe(401);
    const r = await login(u.email, u.password);
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe("too_many_requests");
    const retryAfter = Number(r.headers.get("Retry-After"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    expect(r.body.error.details.retry_after_seconds).toBeGreaterThan(0);

    t.clock.advance(retryAfter);
    expect((await login(u.email, u.password)).status).toBe(200);
  });

  it("forgets an account's failures after a successful sign-in", async () => {
    const u = await t.aUser();
    for (let i = 0; i < 4; i++) await login(u.email, "wrong password");
    expect((await login(u.email, u.password)).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await login(u.email, "wrong password")).status).toBe(401);
    expect((await login(u.email, u.password)).status).toBe(200);
  });

  describe("a token", () => {
    it("expires after its lifetime: 401 token_expired", async () => {
      const u = await t.aUser();
      const token = (await login(u.email, u.password)).body.access_token;
      t.clock.advance(900 + 1);
      const r = await t.request("GET", "/api/v1/auth/me", { token });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe("token_expired");
    });

    it("signed with another key, with alg none, or garbled, is 401 unauthenticated", async () => {
      const u = await t.aUser();
      const now = Math.floor(t.clock.now().getTime() / 1000);
      const forged = await new SignJWT({ ver: 0, typ: "access" })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject(u.id)
        .setIssuer("berth")
        .setAudience("berth-api")
        .setIssuedAt(now)
        .setExpirationTime(now + 600)
        .sign(new TextEncoder().encode("another-secret-another-secret-another!!"));
      const header = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url");
      const payload = Buffer.from(
        JSON.stringify({ sub: u.id, ver: 0, typ: "access", iss: "berth", aud: "berth-api", iat: now, exp: now + 600 }),
      ).toString("base64url");
      for (const token of [forged, `${header}.${payload}.`, "garbage", `${u.token}x`]) {
        const r = await t.request("GET", "/api/v1/auth/me", { token });
        expect(r.status, token).toBe(401);
        expect(r.body.error.code).toBe("unauthenticated");
      }
    });

    it("is required: none, or not a Bearer one, is 401 unauthenticated", async () => {
      expect((await t.request("GET", "/api/v1/auth/me")).body.error.code).toBe("unauthenticated");
      const basic = await t.request("GET", "/api/v1/auth/me", { headers: { Authorization: "Basic Zm9vOmJhcg==" } });
      expect(basic.status).toBe(401);
    });

    it("of a disabled or deleted account stops working at once", async () => {
      const a = await t.aUser();
      const b = await t.aUser();
      await t.database.db("users").where({ id: a.id }).update({ disabled: true });
      await t.database.db("users").where({ id: b.id }).del();
      for (const u of [a, b]) {
        const r = await t.request("GET", "/api/v1/auth/me", { token: u.token });
        expect(r.status).toBe(401);
        expect(r.body.error.code).toBe("unauthenticated");
      }
    });
  });

  describe("an account that must change its password", () => {
    it("signs in, is confined to the password endpoints, changes it, and old tokens die", async () => {
      const u = await t.aUser({ mustChangePassword: true });
      const first = await login(u.email, u.password);
      expect(first.status).toBe(200);
      expect(first.body.must_change_password).toBe(true);
      const oldToken = first.body.access_token;

      for (const [method, path] of [
        ["GET", "/api/v1/auth/me"],
        ["GET", "/api/v1/users"],
        ["GET", "/api/v1/organizations"],
      ] as const) {
        const r = await t.request(method, path, { token: oldToken });
        expect(r.status, path).toBe(403);
        expect(r.body.error.code).toBe("password_change_required");
      }

      const changed = await t.request("POST", "/api/v1/auth/password", {
        token: oldToken,
        json: { current_password: u.password, new_password: "a much better passphrase" },
      });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({ token_type: "bearer", must_change_password: false, user: { id: u.id } });

      const stale = await t.request("GET", "/api/v1/auth/me", { token: oldToken });
      expect(stale.status).toBe(401);
      const fresh = await t.request("GET", "/api/v1/auth/me", { token: changed.body.access_token });
      expect(fresh.status).toBe(200);
      expect(fresh.body.must_change_password).toBe(false);

      expect((await login(u.email, u.password)).status).toBe(401);
      expect((await login(u.email, "a much better passphrase")).status).toBe(200);
    });

    it("cannot keep its password, pick a short one, or change it without the current one", async () => {
      const u = await t.aUser({ mustChangePassword: true, password: "the temporary password" });
      const same = await t.request("POST", "/api/v1/auth/password", {
        token: u.token,
        json: { current_password: u.password, new_password: u.password },
      });
      expect(same.status).toBe(400);
      expect(same.body.error.code).toBe("validation_failed");
      expect(same.body.error.details.issues[0].path).toEqual(["body", "new_password"]);

      const short = await t.request("POST", "/api/v1/auth/password", {
        token: u.token,
        json: { current_password: u.password, new_password: "short" },
      });
      expect(short.status).toBe(400);
      expect(short.body.error.details.issues[0].path).toEqual(["body", "new_password"]);

      const wrong = await t.request("POST", "/api/v1/auth/password", {
        token: u.token,
        json: { current_password: "not the current one", new_password: "a fine new passphrase" },
      });
      expect(wrong.status).toBe(401);
      expect(wrong.body.error.code).toBe("invalid_credentials");

      const malformed = await t.request("POST", "/api/v1/auth/password", {
        token: u.token,
        json: { current: u.password },
      });
      expect(malformed.status).toBe(400);
    });

    it("needs a valid token for the password endpoint too", async () => {
      const r = await t.request("POST", "/api/v1/auth/password", {
        json: { current_password: "x", new_password: "a fine new passphrase" },
      });
      expect(r.status).toBe(401);
      const u = await t.aUser();
      const token = u.token;
      t.clock.advance(901);
      const expired = await t.request("POST", "/api/v1/auth/password", {
        token,
        json: { current_password: u.password, new_password: "a fine new passphrase" },
      });
      expect(expired.status).toBe(401);
      expect(expired.body.error.code).toBe("token_expired");
    });
  });

  it("writes an audit row for a sign-in, failed or not, without the password", async () => {
    const u = await t.aUser();
    await login(u.email, "wrong password here");
    await login(u.email, u.password);
    const rows = await t.database
      .db("audit_log")
      .where({ action: "auth.login" })
      .whereRaw("details->>'email' = ?", [u.email])
      .orderBy("id");
    expect(rows.map((r) => r.outcome)).toEqual(["denied", "success"]);
    expect(rows[1].target_id).toBe(u.id);
    expect(JSON.stringify(rows)).not.toContain(u.password);
  });
});
