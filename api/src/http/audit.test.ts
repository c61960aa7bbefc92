import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../db/db.test-support.ts";
import { aPrincipal, fakeAuthenticator, startTestApi, type TestApi, testDeps } from "./http.test-support.ts";
import { createWidgetTable, testRoutes } from "./layerFixtures.test-support.ts";

const alice = aPrincipal();

describe("audit rows for mutating calls", () => {
  let t: TestDatabase;
  let api: TestApi;
  beforeAll(async () => {
    t = await createTestDatabase();
    await createWidgetTable(t.db);
    api = await startTestApi(testDeps({ db: t.db, authenticate: fakeAuthenticator({ alice }) }), testRoutes);
  });
  afterAll(async () => {
    await api?.stop();
    await t?.drop();
  });
  const rowFor = async (res: Response) => {
    const id = res.headers.get("x-request-id");
    const rows = await t.db("audit_log").where({ request_id: id });
    expect(rows).toHaveLength(1);
    return rows[0];
  };

  it("records a success with actor, action, target, organization, request id and status", async () => {
    const res = await api.call("/test/widgets", { method: "POST", token: "alice", json: { name: "audited" } });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    expect(await rowFor(res)).toMatchObject({
      actor_kind: "user",
      actor_id: alice.userId,
      action: "widget.create",
      target_kind: "widget",
      target_id: id,
      organization_id: "org_test",
      outcome: "success",
      status: 201,
    });
  });

  it("records a replayed idempotent request as a replay that created nothing", async () => {
    const send = () =>
      api.call("/test/widgets", {
        method: "POST",
        token: "alice",
        json: { name: "once" },
        headers: { "Idempotency-Key": "audit-replay" },
      });
    await send();
    const again = await send();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await rowFor(again)).toMatchObject({
      action: "widget.create",
      outcome: "success",
      status: 201,
      details: { idempotent_replay: true },
    });
  });

  it("records a domain refusal as failed with its code", async () => {
    const res = await api.call("/test/widgets/wid_7/refuse", { method: "POST", token: "alice" });
    expect(res.status).toBe(409);
    const row = await rowFor(res);
    expect(row).toMatchObject({
      action: "widget.refuse",
      outcome: "failed",
      status: 409,
      target_kind: "widget",
      target_id: "wid_7",
      actor_id: alice.userId,
    });
    expect(row.details).toMatchObject({ error_code: "conflict" });
  });

  it("records a validation failure", async () => {
    const res = await api.call("/test/widgets", { method: "POST", token: "alice", json: { name: "" } });
    expect(res.status).toBe(400);
    expect(await rowFor(res)).toMatchObject({
      action: "widget.create",
      outcome: "failed",
      status: 400,
      details: { error_code: "validation_failed" },
    });
  });

  it("records an unauthenticated attempt as anonymous and denied", async () => {
    const res = await api.call("/test/widgets", { method: "POST", json: { name: "x" } });
    expect(res.status).toBe(401);
    expect(await rowFor(res)).toMatchObject({
      actor_kind: "anonymous",
      actor_id: null,
      outcome: "denied",
      status: 401,
      details: { error_code: "unauthenticated" },
    });
  });

  it("records a call to a public mutating route", async () => {
    const res = await api.call("/test/echo", { method: "POST", json: { text: "hi" } });
    expect(res.status).toBe(200);
    expect(await rowFor(res)).toMatchObject({
      action: "test.echo",
      actor_kind: "anonymous",
      outcome: "success",
      status: 200,
    });
  });

  it("writes nothing for reads", async () => {
    const res = await api.call("/test/widgets", { token: "alice" });
    expect(res.status).toBe(200);
    expect(await t.db("audit_log").where({ request_id: res.headers.get("x-request-id") })).toHaveLength(0);
  });

  it("refuses to declare a mutating route without an audit action", async () => {
    const { defineRoute } = await import("./route.ts");
    const created = (testRoutes[0]?.responses as Record<number, never> | undefined)?.[201];
    expect(created).toBeDefined();
    expect(() =>
      defineRoute({
        method: "post",
        path: "/x",
        operationId: "x",
        tags: [],
        summary: "x",
        auth: "user",
        responses: { 204: created as never },
        handler: async (_) => ({ status: 204, body: undefined as never }),
      }),
    ).toThrow(/audit/);
  });
});
