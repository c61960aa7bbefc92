// The connect routes over HTTP: the public links route, and the internal verify route as a gateway calls
// it with its cluster's operator token. Real Postgres; sessions from an in-memory port.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db/db.test-support.ts";
import { insertCluster } from "../../db/operations/clusters/insertCluster.ts";
import type { Deps } from "../../deps.ts";
import { OperatorTokens } from "../../domain/clusters/operatorToken.ts";
import type { ClustersRuntime } from "../../domain/clusters/runtime.ts";
import { generateSigningKeyPem, signingKeyFromPem } from "../../domain/clusters/signingKey.ts";
import { dbClusters } from "../../domain/connect/adapters.ts";
import { aPrincipal, aSession, FakeSessions, TestClock } from "../../domain/connect/connect.test-support.ts";
import type { ConnectDeps } from "../../domain/connect/deps.ts";
import { fakeAuthenticator, startTestApi, type TestApi, testDeps } from "../../http/http.test-support.ts";
import { buildInternalApp } from "../../internal/app.ts";
import { connectInternalRoutes } from "../../internal/connect.ts";
import { connectRoutes } from "./routes.ts";

let tdb: TestDatabase;
let deps: Deps;
let api: TestApi;
let internal: Server;
let internalUrl: string;
let sessions: FakeSessions;
const clock = new TestClock();
const operatorToken: Record<string, string> = {};
const alice = aPrincipal("usr_alice");
const bob = aPrincipal("usr_bob");

beforeAll(async () => {
  tdb = await createTestDatabase();
  const tokens = new OperatorTokens({ key: await signingKeyFromPem(generateSigningKeyPem()), clock });
  deps = {
    ...testDeps({ db: tdb.db, clock, authenticate: fakeAuthenticator({ alice, bob }) }),
    clusters: { tokens } as unknown as ClustersRuntime,
  };
  for (const [id, domain] of [
    ["clu_a", "a.sessions.test:9443"],
    ["clu_b", "b.sessions.test"],
  ] as const) {
    const issued = await tokens.issue(id);
    await insertCluster(tdb.db, {
      id,
      name: id,
      session_domain: domain,
      registered_by: null,
      registered_at: clock.now(),
    });
    await tdb.db("clusters").where({ id }).update({
      operator_token_jti: issued.jti,
      operator_token_issued_at: issued.issuedAt,
      operator_token_expires_at: issued.expiresAt,
    });
    operatorToken[id] = issued.token;
  }
  const portsOf = (d: Deps): ConnectDeps => ({ db: d.db, clock: d.clock, clusters: dbClusters(d), sessions });
  api = await startTestApi(deps, connectRoutes(portsOf));
  internal = createServer(
    buildInternalApp(deps, { routes: connectInternalRoutes(portsOf), allowCidrs: ["127.0.0.0/8"] }).callback(),
  );
  await new Promise<void>((r) => internal.listen(0, "127.0.0.1", r));
  internalUrl = `http://127.0.0.1:${(internal.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await api?.stop();
  internal?.closeAllConnections();
  internal?.close();
  await tdb?.drop();
});
beforeEach(() => {
  sessions = new FakeSessions([
    aSession("ses_a").named("s-a").ownedBy("usr_alice").onCluster("clu_a"),
    aSession("ses_b").named("s-b").ownedBy("usr_alice").onCluster("clu_a"),
    aSession("ses_paused").named("s-paused").ownedBy("usr_alice").onCluster("clu_a").paused(),
  ]);
});

async function links(sessionId: string, token = "alice"): Promise<Record<string, string>> {
  const r = await api.call(`/api/v1/sessions/${sessionId}/connect`, { token });
  expect(r.status).toBe(200);
  return ((await r.json()) as { links: Record<string, string> }).links;
}
const tokenOf = (link: string | undefined): string => new URL(link ?? "").searchParams.get("svc_cnx") ?? "";

function verify(
  q: Record<string, string>,
  o: { cluster?: string; token?: string; bearer?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = {};
  const bearer = o.bearer ?? operatorToken[o.cluster ?? "clu_a"];
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  if (o.token) headers["x-berth-connect-token"] = o.token;
  return fetch(`${internalUrl}/internal/connect/verify?${new URLSearchParams(q)}`, { headers });
}

describe("GET /api/v1/sessions/:id/connect", () => {
  it("answers three links on the session's cluster's session domain, not cacheable", async () => {
    const r = await api.call("/api/v1/sessions/ses_a/connect", { token: "alice" });
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    const body = (await r.json()) as {
      session_domain: string;
      cluster_id: string;
      links: Record<string, string>;
      expires_at: string;
    };
    expect(body.session_domain).toBe("a.sessions.test:9443");
    expect(body.cluster_id).toBe("clu_a");
    expect(Object.keys(body.links).sort()).toEqual(["code", "lab", "terminal"]);
    expect(body.links.code).toMatch(
      /^https:\/\/a\.sessions\.test:9443\/proxy\/s-a\/code\/\?svc_cnx=cnx_[A-Za-z0-9_-]{43}$/,
    );
    expect(Date.parse(body.expires_at) - clock.now().getTime()).toBe(60_000);
  });

  it("records who asked for links to which session in the audit log, never the tokens", async () => {
    const before = await tdb.db("audit_log").where({ action: "session.connect" }).count({ n: "*" }).first();
    const r = await api.call("/api/v1/sessions/ses_a/connect", { token: "alice" });
    const body = (await r.json()) as { links: Record<string, string> };
    const rows = await tdb.db("audit_log").where({ action: "session.connect" }).orderBy("id");
    expect(rows.length).toBe(Number(before?.n ?? 0) + 1);
    expect(rows.at(-1)).toMatchObject({
      actor_id: "usr_alice",
      target_kind: "session",
      target_id: "ses_a",
      outcome: "success",
    });
    expect(JSON.stringify(rows)).not.toContain(tokenOf(body.links.lab).slice(4));
  });

  it("follows a PATCHed session domain", async () => {
    await tdb.db("clusters").where({ id: "clu_a" }).update({ session_domain: "elsewhere.test:8443" });
    try {
      expect(new URL((await links("ses_a")).lab ?? "").host).toBe("elsewhere.test:8443");
    } finally {
      await tdb.db("clusters").where({ id: "clu_a" }).update({ session_domain: "a.sessions.test:9443" });
    }
  });

  it("is 404 for another user's session, 409 for a paused one, 401 without a token", async () => {
    expect((await api.call("/api/v1/sessions/ses_a/connect", { token: "bob" })).status).toBe(404);
    const paused = await api.call("/api/v1/sessions/ses_paused/connect", { token: "alice" });
    expect(paused.status).toBe(409);
    expect(((await paused.json()) as { error: { details: { reason: string } } }).error.details.reason).toBe(
      "session_not_running",
    );
    expect((await api.call("/api/v1/sessions/ses_a/connect")).status).toBe(401);
  });
});

describe("GET /internal/connect/verify", () => {
  it("redeems a token for the gateway of the session's cluster, once", async () => {
    const t = tokenOf((await links("ses_a")).lab);
    const first = await verify({ cr: "s-a" }, { token: t });
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect(await first.json()).toEqual({
      session_id: "ses_a",
      cr: "s-a",
      cluster_id: "clu_a",
      user_id: "usr_alice",
      phase: "Running",
    });
    const second = await verify({ cr: "s-a" }, { token: t });
    expect(second.status).toBe(403);
    expect(((await second.json()) as { error: { details: { reason: string } } }).error.details.reason).toBe(
      "token_used",
    );
  });

  it("lets exactly one of 100 parallel redemptions through", async () => {
    const t = tokenOf((await links("ses_a")).terminal);
    const statuses = await Promise.all(
      Array.from({ length: 100 }, () => verify({ cr: "s-a" }, { token: t }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 403)).toHaveLength(99);
  });

  it("refuses another cluster's gateway, and does not spend the token", async () => {
    const t = tokenOf((await links("ses_a")).lab);
    const r = await verify({ cr: "s-a" }, { token: t, cluster: "clu_b" });
    expect(r.status).toBe(403);
    expect(((await r.json()) as { error: { details: { reason: string } } }).error.details.reason).toBe("other_cluster");
    expect((await verify({ cr: "s-a" }, { token: t })).status).toBe(200);
  });

  it("refuses a token for session A presented for session B", async () => {
    const t = tokenOf((await links("ses_a")).lab);
    const r = await verify({ cr: "s-b" }, { token: t });
    expect(((await r.json()) as { error: { details: { reason: string } } }).error.details.reason).toBe("other_session");
  });

  it("refuses an expired token", async () => {
    const t = tokenOf((await links("ses_a")).lab);
    clock.advance(61_000);
    try {
      const r = await verify({ cr: "s-a" }, { token: t });
      expect(((await r.json()) as { error: { details: { reason: string } } }).error.details.reason).toBe(
        "token_expired",
      );
    } finally {
      clock.advance(-61_000);
    }
  });

  it("needs an operator token: none, or a user's, is 401", async () => {
    expect((await verify({ cr: "s-a" }, { bearer: "" })).status).toBe(401);
    expect((await verify({ cr: "s-a" }, { bearer: "alice" })).status).toBe(401);
  });

  it("checks a grant without spending anything (cookie renewal)", async () => {
    const ok = await verify({ cr: "s-a", session: "ses_a", user: "usr_alice" });
    expect(ok.status).toBe(200);
    const notOwner = await verify({ cr: "s-a", session: "ses_a", user: "usr_bob" });
    expect(((await notOwner.json()) as { error: { details: { reason: string } } }).error.details.reason).toBe(
      "not_allowed",
    );
    const paused = await verify({ cr: "s-paused", session: "ses_paused", user: "usr_alice" });
    expect(paused.status).toBe(409);
  });

  it("refuses a request with neither a token nor a grant to check", async () => {
    expect((await verify({ cr: "s-a" })).status).toBe(403);
    expect((await verify({ cr: "s-a", session: "ses_a" })).status).toBe(400);
  });
});
