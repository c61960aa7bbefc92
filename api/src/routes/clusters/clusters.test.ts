// The clusters routes without a cluster behind them: who may call what, and what input is refused
// before anything is probed. Registration against real clusters: e2e/src/clusters.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db/db.test-support.ts";
import { aPrincipal, fakeAuthenticator, startTestApi, type TestApi, testDeps } from "../../http/http.test-support.ts";
import { routes as nodeRoutes } from "../nodes/routes.ts";
import { routes as clusterRoutes } from "./routes.ts";

let db: TestDatabase;
let api: TestApi;
const admin = aPrincipal({ isSuperAdmin: true });
const user = aPrincipal();

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(testDeps({ db: db.db, authenticate: fakeAuthenticator({ admin, user }) }), [
    ...clusterRoutes,
    ...nodeRoutes,
  ]);
});
afterAll(async () => {
  await api?.stop();
  await db?.drop();
});

const register = (token: string, json: unknown) => api.call("/api/v1/clusters", { method: "POST", token, json });
const valid = {
  name: "gpu-a",
  session_domain: "gpu-a.example.com",
  credential: { server: "https://127.0.0.1:6443", token: "t" },
};

describe("the clusters routes", () => {
  it("refuse a user who is not super_admin before touching anything", async () => {
    const res = await register("user", valid);
    expect(res.status).toBe(403);
    expect((await res.json()).error.code).toBe("forbidden");
  });

  it("answer 401 token_expired to an expired token", async () => {
    const res = await register("expired", valid);
    expect(res.status).toBe(401);
    expect((await res.json()).error.code).toBe("token_expired");
  });

  it.each([
    [
      "a session domain with a scheme",
      { ...valid, session_domain: "https://gpu-a.example.com" },
      ["body", "session_domain"],
    ],
    ["a session domain with a path", { ...valid, session_domain: "gpu-a.example.com/x" }, ["body", "session_domain"]],
    ["a port out of range", { ...valid, session_domain: "gpu-a.example.com:0" }, ["body", "session_domain"]],
    ["no credential", { name: "gpu-a", session_domain: "gpu-a.example.com" }, ["body", "credential"]],
    ["an empty name", { ...valid, name: " " }, ["body", "name"]],
  ])("refuse %s with validation_failed", async (_what, body, path) => {
    const res = await register("admin", body);
    expect(res.status).toBe(400);
    const { error } = await res.json();
    expect(error.code).toBe("validation_failed");
    expect(error.details.issues.map((i: { path: unknown[] }) => i.path.slice(0, 2))).toContainEqual(path);
  });

  it("refuse an http:// server as invalid input, not as an unreachable cluster", async () => {
    const res = await register("admin", { ...valid, credential: { server: "http://127.0.0.1:6443", token: "t" } });
    expect(res.status).toBe(400);
    expect((await res.json()).error.details.issues[0].path).toEqual(["body", "credential", "server"]);
  });

  it("answer 503 when the process has no management cluster", async () => {
    const res = await register("admin", valid);
    expect(res.status).toBe(503);
    expect((await res.json()).error.code).toBe("unavailable");
  });

  it("refuse malformed ids and node names", async () => {
    expect((await api.call("/api/v1/clusters/not-an-id", { token: "admin" })).status).toBe(400);
    expect((await api.call("/api/v1/nodes/clu_abc/UPPER/cordon", { method: "POST", token: "admin" })).status).toBe(400);
  });

  it("list an empty fleet, paged", async () => {
    const res = await api.call("/api/v1/node-pools?size=5", { token: "user" });
    expect(await res.json()).toEqual({ data: [], pagination: { page: 1, size: 5, total: 0 } });
  });
});
