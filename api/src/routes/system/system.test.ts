import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contractRoutes } from "../../contract.ts";
import { createTestDatabase, type TestDatabase } from "../../db/db.test-support.ts";
import { ERROR_CODE_LIST } from "../../errors.ts";
import { OPENAPI_FILE } from "../../generateOpenapi.ts";
import { startTestApi, type TestApi, testDeps } from "../../http/http.test-support.ts";
import { renderOpenApi } from "../../http/openapi.ts";

describe("system routes", () => {
  let t: TestDatabase;
  let api: TestApi;
  beforeAll(async () => {
    t = await createTestDatabase();
    api = await startTestApi(testDeps({ db: t.db }));
  });
  afterAll(async () => {
    await api?.stop();
    await t?.drop();
  });

  it("answers /healthz at the root without a token", async () => {
    const res = await api.call("/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  it("serves the same OpenAPI document as the committed api/openapi.json (run `npm run generate -w api` when this fails)", async () => {
    const res = await api.call("/api/v1/openapi.json");
    expect(res.status).toBe(200);
    const committed = readFileSync(OPENAPI_FILE, "utf8");
    expect(`${JSON.stringify(await res.json(), null, 2)}\n`).toBe(committed);
    expect(renderOpenApi(contractRoutes)).toBe(committed);
  });

  it("describes the error envelope with every code, the bearer scheme, paging and idempotency", () => {
    const doc = JSON.parse(readFileSync(OPENAPI_FILE, "utf8"));
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.components.schemas.ErrorEnvelope.properties.error.properties.code.enum).toEqual(ERROR_CODE_LIST);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.info.description).toContain("integer minor units");
    for (const route of contractRoutes.filter((r) => !r.hidden)) {
      const op = doc.paths[route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")][route.method];
      const params = (op.parameters ?? []) as { name: string; in: string }[];
      if (route.idempotent)
        expect(params).toContainEqual(expect.objectContaining({ name: "Idempotency-Key", in: "header" }));
      if (route.auth !== "public") expect(op.security).toEqual([{ bearer: [] }]);
    }
  });

  it("links each create to what acts on the thing it made, for stateful fuzzing", () => {
    const doc = JSON.parse(readFileSync(OPENAPI_FILE, "utf8"));
    const links = doc.paths["/api/v1/sessions"].post.responses["201"].links;
    for (const op of ["getSession", "pauseSession", "resumeSession", "terminateSession"])
      expect(links[op]).toEqual({ operationId: op, parameters: { sessionId: "$response.body#/id" } });
    expect(doc.paths["/api/v1/storage/volumes"].post.responses["201"].links.deleteVolume.parameters).toEqual({
      volumeId: "$response.body#/id",
    });
    expect(doc.paths["/api/v1/offerings"].post.responses["201"].links.getOffering.parameters).toEqual({
      name: "$response.body#/name",
    });
    // A nested create: the collection's own parameter comes from the request.
    expect(
      doc.paths["/api/v1/organizations/{organizationId}/members"].post.responses["201"].links.removeOrganizationMember
        .parameters,
    ).toEqual({ userId: "$response.body#/user_id", organizationId: "$request.path.organizationId" });
    // Every link names an operation the document has, and only path parameters that operation takes.
    type Op = { operationId: string; parameters?: { name: string; in: string }[] };
    const ops = new Map<string, Op>();
    for (const item of Object.values(doc.paths) as Record<string, Op>[])
      for (const op of Object.values(item)) ops.set(op.operationId, op);
    for (const item of Object.values(doc.paths) as Record<string, { responses: Record<string, { links?: object }> }>[])
      for (const op of Object.values(item))
        for (const link of Object.values(op.responses["201"]?.links ?? {}) as {
          operationId: string;
          parameters: Record<string, string>;
        }[]) {
          const target = ops.get(link.operationId);
          expect(target, link.operationId).toBeDefined();
          const names = (target?.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name);
          for (const name of Object.keys(link.parameters)) expect(names, link.operationId).toContain(name);
        }
  });

  it("documents 503 unavailable, with the envelope, on every operation that reaches a database or cluster", () => {
    const doc = JSON.parse(readFileSync(OPENAPI_FILE, "utf8"));
    for (const route of contractRoutes.filter((r) => !r.hidden)) {
      const op = doc.paths[route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")][route.method];
      if (route.selfContained) expect(op.responses["503"], route.operationId).toBeUndefined();
      else
        expect(op.responses["503"], route.operationId).toEqual({
          description: "`unavailable`",
          content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } },
        });
    }
    expect(doc.paths["/healthz"].get.responses["503"]).toBeUndefined();
    expect(doc.paths["/api/v1/users"].get.responses["503"]).toBeDefined();
  });

  it("serves the API browser from its own assets with no external URL", async () => {
    const res = await api.call("/api/v1/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? "");
    expect(urls.length).toBeGreaterThan(0);
    for (const u of urls) {
      expect(u.startsWith("/api/v1/docs/")).toBe(true);
      const asset = await api.call(u);
      expect(asset.status, u).toBe(200);
    }
    expect(html).not.toMatch(/https?:\/\//);
    const init = await (await api.call("/api/v1/docs/assets/init.js")).text();
    expect(init).toContain('"/api/v1/openapi.json"');
    expect(init).not.toMatch(/https?:\/\//);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
  });

  it("answers an unknown docs asset with the 404 envelope", async () => {
    const res = await api.call("/api/v1/docs/assets/../../../etc/passwd");
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });

  it("keeps the Prometheus exposition off the public listener", async () => {
    const res = await api.call("/metrics");
    expect(res.status).toBe(404);
  });

  it("counts requests and latency by route template, method and status", async () => {
    await api.call("/healthz");
    await api.call("/no/such/route");
    const text = await api.deps.metrics.registry.metrics();
    expect(text).toMatch(/berth_http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
    expect(text).toMatch(/berth_http_requests_total\{method="GET",route="unmatched",status="404"\} \d+/);
    expect(text).toMatch(
      /berth_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/healthz",status="200"\}/,
    );
  });
});
