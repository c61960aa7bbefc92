import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "../config.test-support.ts";
import { createTestDatabase, type TestDatabase } from "../db/db.test-support.ts";
import { allRoutes } from "../routes/index.ts";
import { systemRoutes } from "../routes/system/routes.ts";
import { aPrincipal, fakeAuthenticator, startTestApi, type TestApi, testDeps } from "./http.test-support.ts";
import { createWidgetTable, testRoutes } from "./layerFixtures.test-support.ts";

const alice = aPrincipal();
const pending = aPrincipal({ mustChangePassword: true });

async function envelopeOf(res: Response) {
  const body = (await res.json()) as {
    error: { code: string; message: string; details: Record<string, unknown>; request_id: string; timestamp: string };
  };
  expect(Object.keys(body)).toEqual(["error"]);
  expect(Object.keys(body.error).sort()).toEqual(["code", "details", "message", "request_id", "timestamp"]);
  expect(body.error.request_id).toBe(res.headers.get("x-request-id"));
  expect(new Date(body.error.timestamp).toISOString()).toBe(body.error.timestamp);
  return body.error;
}

describe("the error envelope", () => {
  let t: TestDatabase;
  let api: TestApi;
  beforeAll(async () => {
    t = await createTestDatabase();
    await createWidgetTable(t.db);
    const deps = testDeps({
      db: t.db,
      config: testConfig({ BERTH_BODY_LIMIT_BYTES: "2048" }),
      authenticate: fakeAuthenticator({ alice, pending }),
    });
    api = await startTestApi(deps, [...systemRoutes(() => allRoutes), ...testRoutes]);
  });
  afterAll(async () => {
    await api?.stop();
    await t?.drop();
  });

  it("answers an unknown route with 404 not_found", async () => {
    const res = await api.call("/api/v1/nothing-here");
    expect(res.status).toBe(404);
    expect((await envelopeOf(res)).code).toBe("not_found");
  });

  it("answers a wrong method with 405 method_not_allowed and an Allow header", async () => {
    const res = await api.call("/test/widgets", { method: "DELETE", token: "alice" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toContain("GET");
    const e = await envelopeOf(res);
    expect(e.code).toBe("method_not_allowed");
    expect(e.details.allowed).toContain("GET");
  });

  it("answers malformed JSON with 400 malformed_json", async () => {
    const res = await api.call("/test/widgets", {
      method: "POST",
      token: "alice",
      headers: { "Content-Type": "application/json" },
      body: '{"name": ',
    });
    expect(res.status).toBe(400);
    expect((await envelopeOf(res)).code).toBe("malformed_json");
  });

  it("answers a body that is not JSON with 415 unsupported_media_type", async () => {
    const res = await api.call("/test/widgets", {
      method: "POST",
      token: "alice",
      headers: { "Content-Type": "text/plain" },
      body: "name=x",
    });
    expect(res.status).toBe(415);
    expect((await envelopeOf(res)).code).toBe("unsupported_media_type");
  });

  it("answers a body over the limit with 413 payload_too_large, also when Content-Length is not sent", async () => {
    const big = JSON.stringify({ name: "x".repeat(4000) });
    const res = await api.call("/test/widgets", {
      method: "POST",
      token: "alice",
      headers: { "Content-Type": "application/json" },
      body: big,
    });
    expect(res.status).toBe(413);
    const e = await envelopeOf(res);
    expect(e.code).toBe("payload_too_large");
    expect(e.details.limit_bytes).toBe(2048);

    const chunked = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    const res2 = await api.call("/test/widgets", {
      method: "POST",
      token: "alice",
      headers: { "Content-Type": "application/json" },
      body: chunked,
      duplex: "half",
    } as RequestInit);
    expect(res2.status).toBe(413);
    expect((await envelopeOf(res2)).code).toBe("payload_too_large");
  });

  it("answers invalid input with 400 validation_failed naming each bad field and why", async () => {
    const res = await api.call("/test/widgets", {
      method: "POST",
      token: "alice",
      json: { name: "", color: "green", extra: 1 },
    });
    expect(res.status).toBe(400);
    const e = await envelopeOf(res);
    expect(e.code).toBe("validation_failed");
    const issues = e.details.issues as { path: (string | number)[]; message: string; code: string }[];
    expect(issues.map((i) => i.path.join("."))).toEqual(expect.arrayContaining(["body.name", "body.color"]));
    for (const i of issues) {
      expect(i.message).not.toBe("");
      expect(i.code).not.toBe("");
    }
  });

  it("answers invalid path parameters with 400 validation_failed under params", async () => {
    const res = await api.call("/test/widgets/not-an-id", { token: "alice" });
    expect(res.status).toBe(400);
    const e = await envelopeOf(res);
    expect((e.details.issues as { path: string[] }[])[0]?.path).toEqual(["params", "widgetId"]);
  });

  it("answers a missing body on a route that needs one with 400 validation_failed", async () => {
    const res = await api.call("/test/widgets", { method: "POST", token: "alice" });
    expect(res.status).toBe(400);
    expect((await envelopeOf(res)).code).toBe("validation_failed");
  });

  it("answers an unexpected failure with 500 internal and no trace of the cause", async () => {
    const res = await api.call("/test/boom");
    expect(res.status).toBe(500);
    const text = await res.clone().text();
    expect(text).not.toContain("postgres://");
    expect(text).not.toContain("at ");
    expect((await envelopeOf(res)).code).toBe("internal");
  });

  it("answers a presenter that leaks a field with 500 internal instead of sending it", async () => {
    await t.db("test_widgets").insert({ name: "w", owner: alice.userId });
    const res = await api.call("/test/leak", { token: "alice" });
    expect(res.status).toBe(500);
    expect(await res.clone().text()).not.toContain("do-not-leak");
    expect((await envelopeOf(res)).code).toBe("internal");
  });

  it("answers a missing bearer token with 401 unauthenticated and WWW-Authenticate", async () => {
    const res = await api.call("/test/widgets");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await envelopeOf(res)).code).toBe("unauthenticated");
  });

  it("answers an invalid bearer token with 401 unauthenticated", async () => {
    const res = await api.call("/test/widgets", { token: "forged" });
    expect(res.status).toBe(401);
    expect((await envelopeOf(res)).code).toBe("unauthenticated");
  });

  it("answers an expired bearer token with 401 token_expired", async () => {
    const res = await api.call("/test/widgets", { token: "expired" });
    expect(res.status).toBe(401);
    expect((await envelopeOf(res)).code).toBe("token_expired");
  });

  it("refuses a user who must change their password with 403 password_change_required, except on password routes", async () => {
    const res = await api.call("/test/widgets", { token: "pending" });
    expect(res.status).toBe(403);
    expect((await envelopeOf(res)).code).toBe("password_change_required");
    const ok = await api.call("/test/password", { method: "POST", token: "pending" });
    expect(ok.status).toBe(204);
  });

  it("maps a domain error to its code and status with its details", async () => {
    const res = await api.call("/test/widgets/wid_1/refuse", { method: "POST", token: "alice" });
    expect(res.status).toBe(409);
    const e = await envelopeOf(res);
    expect(e.code).toBe("conflict");
    expect(e.details).toEqual({ widget: "wid_1" });
  });

  it("puts a request id on every response and keeps a sane incoming one", async () => {
    const ok = await api.call("/healthz");
    expect(ok.headers.get("x-request-id")).toMatch(/^req_/);
    const mine = await api.call("/healthz", { headers: { "X-Request-Id": "client-abc-12345" } });
    expect(mine.headers.get("x-request-id")).toBe("client-abc-12345");
    const junk = await api.call("/nope", { headers: { "X-Request-Id": "bad id with spaces <script>" } });
    expect(junk.headers.get("x-request-id")).toMatch(/^req_/);
    expect((await envelopeOf(junk)).request_id).toBe(junk.headers.get("x-request-id"));
  });
});
