import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../db/db.test-support.ts";
import { allRoutes } from "../routes/index.ts";
import { aPrincipal, fakeAuthenticator, startTestApi, type TestApi, testDeps } from "./http.test-support.ts";

/** node:http rather than fetch: fetch refuses to send TRACE. */
function send(url: string, method: string, path: string, token?: string) {
  return new Promise<{ status: number; allow: string | undefined; body: string }>((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      { method, headers: token ? { authorization: `Bearer ${token}` } : {} },
      (res) => {
        let body = "";
        res.on("data", (c) => {
          body += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, allow: res.headers.allow, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

const methods = (allow: string | undefined) => (allow ?? "").split(/,\s*/).sort();

describe("the router (every route of the contract)", () => {
  let t: TestDatabase;
  let api: TestApi;
  beforeAll(async () => {
    t = await createTestDatabase();
    api = await startTestApi(
      testDeps({ db: t.db, authenticate: fakeAuthenticator({ alice: aPrincipal() }) }),
      allRoutes,
    );
  });
  afterAll(async () => {
    await api?.stop();
    await t?.drop();
  });

  it("lets a static segment win over a parameter: GET /sessions/preview-cost is 405, not a session lookup", async () => {
    const res = await send(api.url, "GET", "/api/v1/sessions/preview-cost", "alice");
    expect(res.status).toBe(405);
    expect(methods(res.allow)).toEqual(["POST"]);
    expect(JSON.parse(res.body).error.code).toBe("method_not_allowed");
  });

  it("lists only the static path's methods for OPTIONS", async () => {
    const res = await send(api.url, "OPTIONS", "/api/v1/sessions/preview-cost");
    expect(res.status).toBe(200);
    expect(methods(res.allow)).toEqual(["POST"]);
    const events = await send(api.url, "OPTIONS", "/api/v1/sessions/events");
    expect(methods(events.allow)).toEqual(["GET", "HEAD"]);
  });

  it("still routes a parameter that no static sibling claims", async () => {
    const res = await send(api.url, "OPTIONS", "/api/v1/sessions/some-session");
    expect(methods(res.allow)).toContain("GET");
    expect(methods(res.allow)).not.toContain("POST");
  });

  it("answers a method nothing serves (TRACE, QUERY) on a known path with 405 and Allow, not 501", async () => {
    for (const m of ["TRACE", "QUERY", "PUT"]) {
      const res = await send(api.url, m, "/api/v1/sessions/events", "alice");
      expect(res.status, m).toBe(405);
      expect(methods(res.allow), m).toEqual(["GET", "HEAD"]);
    }
  });

  it("answers an unknown path with 404 whatever the method", async () => {
    for (const m of ["GET", "TRACE"]) {
      const res = await send(api.url, m, "/api/v1/nothing-here", "alice");
      expect(res.status, m).toBe(404);
    }
  });
});
