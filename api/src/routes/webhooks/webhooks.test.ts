// /api/v1/webhooks over HTTP with the real API, authenticator and database: who may do what (BOLA across
// organizations on every route), the secret shown once, bad input with its stable codes, redelivery, ping.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_WEBHOOK_SECRET_KEYS } from "../../config.test-support.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  itBehavesPerRole,
  type RouteCase,
  startIdentityTestApi,
} from "../../domain/identity/identity.test-support.ts";
import { parseSecretKeys } from "../../domain/webhooks/secretBox.ts";
import { makeWebhooksService } from "../../domain/webhooks/service.ts";

const names: Record<string, string[]> = {
  "hooks.example.test": ["93.184.215.14"],
  "sneaky.example.test": ["10.0.0.1"],
};

describe("/api/v1/webhooks", () => {
  let t: IdentityTestApi;
  let w: IdentityWorld;

  beforeAll(async () => {
    t = await startIdentityTestApi();
    w = await anIdentityWorld(t);
    // The resolver is injected (no DNS in tests); the allowlist is empty: nothing internal is admitted.
    t.deps.webhooks = makeWebhooksService({
      allowHosts: [],
      secretKeys: parseSecretKeys(TEST_WEBHOOK_SECRET_KEYS),
      resolve: async (h) => {
        const a = names[h];
        if (!a) throw new Error("ENOTFOUND");
        return a;
      },
    });
  });
  afterAll(async () => {
    await t.stop();
  });

  const create = async (token: string, body: Record<string, unknown>) =>
    t.request("POST", "/api/v1/webhooks", { token, json: body });
  const anEndpointOfA = async (): Promise<string> => {
    const r = await create(w.adminA.token, { organization_id: w.orgA.id, url: "https://hooks.example.test/a" });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.id as string;
  };

  const refusedForA: RouteCase["refused"] = [
    { as: "adminB", status: 404, why: "another organization's admin" },
    { as: "memberB", status: 404, why: "a member of another organization" },
    { as: "outsider", status: 404, why: "no membership" },
    { as: "memberA", status: 403, why: "a member, not an admin, of the organization" },
    { as: "projectAdminA", status: 403, why: "a project admin, not an organization admin" },
  ];
  const allowed = (status: number): RouteCase["allowed"] => [
    { as: "adminA", status },
    { as: "superAdmin", status },
  ];

  const cases: RouteCase[] = [
    {
      name: "/api/v1/webhooks (create)",
      method: "POST",
      path: () => "/api/v1/webhooks",
      body: (w) => ({
        organization_id: w.orgA.id,
        url: "https://hooks.example.test/in",
        event_types: ["session.running"],
      }),
      allowed: allowed(201),
      refused: refusedForA,
      malformed: { url: 42 },
    },
    {
      name: "/api/v1/webhooks/{id}",
      method: "GET",
      path: async () => `/api/v1/webhooks/${await anEndpointOfA()}`,
      allowed: allowed(200),
      refused: refusedForA,
    },
    {
      name: "/api/v1/webhooks/{id} (update)",
      method: "PATCH",
      path: async () => `/api/v1/webhooks/${await anEndpointOfA()}`,
      body: () => ({ description: "changed", enabled: false }),
      allowed: allowed(200),
      refused: refusedForA,
      malformed: { enabled: "yes" },
    },
    {
      name: "/api/v1/webhooks/{id} (delete)",
      method: "DELETE",
      path: async () => `/api/v1/webhooks/${await anEndpointOfA()}`,
      allowed: allowed(204),
      refused: refusedForA,
    },
    {
      name: "/api/v1/webhooks/{id}/rotate-secret",
      method: "POST",
      path: async () => `/api/v1/webhooks/${await anEndpointOfA()}/rotate-secret`,
      body: () => ({}),
      allowed: allowed(200),
      refused: refusedForA,
      malformed: { overlap_seconds: -1 },
    },
    {
      name: "/api/v1/webhooks/{id}/deliveries",
      method: "GET",
      path: async () => `/api/v1/webhooks/${await anEndpointOfA()}/deliveries`,
      allowed: allowed(200),
      refused: refusedForA,
    },
    {
      name: "/api/v1/webhooks/{id}/attempts",
      method: "GET",
      path: async () => `/api/v1/webhooks/${await anEndpointOfA()}/attempts`,
      allowed: allowed(200),
      refused: refusedForA,
    },
    {
      name: "/api/v1/webhooks/{id}/redeliver",
      method: "POST",
      path: async () => `/api/v1/webhooks/${await anEndpointOfA()}/redeliver`,
      body: () => ({ failed_since: "2026-01-01T00:00:00Z" }),
      allowed: allowed(202),
      refused: refusedForA,
      malformed: { failed_since: "yesterday" },
    },
    {
      name: "/api/v1/webhooks/{id}/test",
      method: "POST",
      path: async () => `/api/v1/webhooks/${await anEndpointOfA()}/test`,
      allowed: allowed(202),
      refused: refusedForA,
    },
  ];

  // Each case's callers create endpoints in organization A: keep under its limit of 10 by cleaning up.
  const cleanup = async () => t.database.db("webhook_endpoints").delete();
  describe("per role", () => {
    beforeAll(cleanup);
    itBehavesPerRole(
      cases.map((c) => ({
        ...c,
        path: async (w) => {
          if (Number((await t.database.db("webhook_endpoints").count({ c: "*" }))[0]?.c) >= 8) await cleanup();
          return c.path(w);
        },
      })),
      () => ({ t, w }),
    );
  });

  it("shows the secret only when it is made, and lists only the caller's organizations", async () => {
    await cleanup();
    const a = await create(w.adminA.token, { organization_id: w.orgA.id, url: "https://hooks.example.test/a" });
    const b = await create(w.adminB.token, { url: "https://hooks.example.test/b" }); // B's only organization
    expect(a.body.secret).toMatch(/^whsec_/);
    expect(b.body.organization_id).toBe(w.orgB.id);
    const got = await t.request("GET", `/api/v1/webhooks/${a.body.id}`, { token: w.adminA.token });
    expect(got.body).not.toHaveProperty("secret");
    const listA = await t.request("GET", "/api/v1/webhooks", { token: w.adminA.token });
    expect(listA.body.data.map((e: { id: string }) => e.id)).toEqual([a.body.id]);
    expect(listA.body.data[0]).not.toHaveProperty("secret");
    const listAll = await t.request("GET", "/api/v1/webhooks", { token: w.superAdmin.token });
    expect(listAll.body.pagination.total).toBe(2);
    const listMember = await t.request("GET", `/api/v1/webhooks?organization_id=${w.orgA.id}`, {
      token: w.memberA.token,
    });
    expect(listMember.body).toMatchObject({ data: [], pagination: { total: 0 } });
    // Asking for another organization answers the caller's scope: nothing of B.
    const asked = await t.request("GET", `/api/v1/webhooks?organization_id=${w.orgB.id}`, { token: w.adminA.token });
    expect(asked.body.data).toEqual([]);

    const rotated = await t.request("POST", `/api/v1/webhooks/${a.body.id}/rotate-secret`, {
      token: w.adminA.token,
      json: { overlap_seconds: 3600 },
    });
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(a.body.secret);
    expect(Date.parse(rotated.body.secret_rotation_ends_at)).toBeGreaterThan(Date.now());

    // At rest both are sealed (BERTH_WEBHOOK_SECRET_KEYS): the rows hold neither secret, and they open to both.
    const row = await t.database.db("webhook_endpoints").where({ id: a.body.id }).first();
    for (const v of [row.secret, row.previous_secret]) expect(v).toMatch(/^enc:v1:test:/);
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(a.body.secret.slice(6));
    expect(stored).not.toContain(rotated.body.secret.slice(6));
    expect(t.deps.webhooks.secrets.open(row.secret, row.id)).toBe(rotated.body.secret);
    expect(t.deps.webhooks.secrets.open(row.previous_secret, row.id)).toBe(a.body.secret);
  });

  it("refuses bad input with the envelope, a stable code and what to fix", async () => {
    const cases: [Record<string, unknown>, number, string, unknown][] = [
      [{ url: "http://hooks.example.test/x" }, 400, "webhook_url_invalid", { reason: "must use https" }],
      [{ url: "::not a url::" }, 400, "webhook_url_invalid", { reason: "does not parse as an absolute URL" }],
      [{ url: "https://u:p@hooks.example.test/" }, 400, "webhook_url_invalid", {}],
      [{ url: "https://127.0.0.1/x" }, 422, "webhook_target_forbidden", { address: "127.0.0.1" }],
      [{ url: "https://169.254.169.254/x" }, 422, "webhook_target_forbidden", { reason: "a link-local address" }],
      [{ url: "https://[::1]/x" }, 422, "webhook_target_forbidden", { reason: "a loopback address" }],
      [{ url: "https://[::ffff:10.0.0.1]/x" }, 422, "webhook_target_forbidden", { reason: "a IPv4-mapped address" }],
      [{ url: "https://sneaky.example.test/x" }, 422, "webhook_target_forbidden", { address: "10.0.0.1" }],
      [{ url: "https://nowhere.example.test/x" }, 422, "webhook_target_forbidden", { reason: "does not resolve" }],
      [{ url: "https://hooks.example.test/", event_types: ["session.exploded"] }, 400, "validation_failed", {}],
      [{ url: "https://hooks.example.test/", colour: "red" }, 400, "validation_failed", {}],
      [{}, 400, "validation_failed", {}],
    ];
    for (const [body, status, code, details] of cases) {
      const r = await create(w.adminA.token, { organization_id: w.orgA.id, ...body });
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body.error.code).toBe(code);
      expect(r.body.error.details).toMatchObject(details as object);
      expect(r.body.error.message).toBeTruthy();
    }
    const unknownKind = await create(w.adminA.token, {
      organization_id: w.orgA.id,
      url: "https://hooks.example.test/",
      event_types: ["session.running", "session.exploded"],
    });
    expect(unknownKind.body.error.details.issues[0].path).toEqual(["body", "event_types", 1]);
    // Who administers no single organization must say which.
    const which = await create(w.superAdmin.token, { url: "https://hooks.example.test/" });
    expect([which.status, which.body.error.details.issues[0].path]).toEqual([400, ["body", "organization_id"]]);
    const id = await anEndpointOfA();
    const patch = await t.request("PATCH", `/api/v1/webhooks/${id}`, {
      token: w.adminA.token,
      json: { url: "https://127.0.0.1/" },
    });
    expect(patch.status).toBe(422);
    expect((await t.request("GET", `/api/v1/webhooks/${id}`, { token: w.adminA.token })).body.url).toBe(
      "https://hooks.example.test/a",
    );
    const nope = await t.request("POST", "/api/v1/webhooks/whk_doesnotexist/redeliver", {
      token: w.adminA.token,
      json: { event_id: "msg_nope" },
    });
    expect(nope.status).toBe(404);
    const unknownEvent = await t.request("POST", `/api/v1/webhooks/${id}/redeliver`, {
      token: w.adminA.token,
      json: { event_id: "msg_nope" },
    });
    expect(unknownEvent.status).toBe(404);
  });

  it("holds an organization to 10 endpoints", async () => {
    await cleanup();
    const made = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        create(w.adminA.token, { organization_id: w.orgA.id, url: `https://hooks.example.test/${i}` }),
      ),
    );
    expect(made.filter((r) => r.status === 201)).toHaveLength(10);
    const refused = made.filter((r) => r.status !== 201);
    expect(refused.map((r) => [r.status, r.body.error.code])).toEqual([
      [409, "webhook_limit_reached"],
      [409, "webhook_limit_reached"],
    ]);
    expect(refused[0]?.body.error.details).toMatchObject({ limit: 10 });
  });

  it("queues a test ping and a redelivery, and lists them", async () => {
    await cleanup();
    const id = await anEndpointOfA();
    const ping = await t.request("POST", `/api/v1/webhooks/${id}/test`, { token: w.adminA.token });
    expect(ping.status).toBe(202);
    const deliveries = await t.request("GET", `/api/v1/webhooks/${id}/deliveries`, { token: w.adminA.token });
    expect(deliveries.body.data).toMatchObject([
      { event_id: ping.body.event_id, event_type: "webhook.test", state: "pending" },
    ]);
    await t.database.db("webhook_deliveries").where({ endpoint_id: id }).update({ state: "failed", attempts: 8 });
    const again = await t.request("POST", `/api/v1/webhooks/${id}/redeliver`, {
      token: w.adminA.token,
      json: { event_id: ping.body.event_id },
    });
    expect(again.body).toEqual({ requeued: 1 });
    const row = await t.database.db("webhook_deliveries").where({ endpoint_id: id }).first();
    expect([row.state, row.attempts]).toEqual(["pending", 0]);
    const audit = await t.database.db("audit_log").where({ action: "webhook.redeliver" }).first();
    expect(audit).toBeDefined();
  });

  it("lists the event kinds it covers", async () => {
    const r = await t.request("GET", "/api/v1/webhooks/event-types", { token: w.memberA.token });
    const types = r.body.data.map((k: { type: string }) => k.type);
    expect(types).toContain("session.paused");
    expect(types).toEqual(expect.arrayContaining(["image.build.succeeded", "image.import.failed"]));
    // An endpoint may subscribe to them.
    const made = await create(w.adminA.token, {
      organization_id: w.orgA.id,
      url: "https://hooks.example.test/images",
      event_types: ["image.build.failed", "image.import.failed"],
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
  });
});
