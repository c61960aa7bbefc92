// Connect tokens against a real Postgres: issue, redeem exactly once (also across "replicas", i.e.
// separate connection pools), and every refusal says why.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db/db.test-support.ts";
import { connect, type Db } from "../../db/knex.ts";
import { checkConnectGrant } from "./checkConnectGrant.ts";
import { aPrincipal, aSession, FakeClusters, FakeSessions, TestClock } from "./connect.test-support.ts";
import type { ConnectDeps } from "./deps.ts";
import { issueConnectLinks } from "./issueConnectLinks.ts";
import { verifyConnectToken } from "./verifyConnectToken.ts";

let tdb: TestDatabase;
let sessions: FakeSessions;
let clusters: FakeClusters;
let clock: TestClock;
let deps: ConnectDeps;

const alice = aPrincipal("usr_alice");
const bob = aPrincipal("usr_bob");

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(() => {
  sessions = new FakeSessions([
    aSession("ses_a").named("s-a").ownedBy("usr_alice").onCluster("clu_a"),
    aSession("ses_b").named("s-b").ownedBy("usr_alice").onCluster("clu_a"),
    aSession("ses_bob").named("s-bob").ownedBy("usr_bob").onCluster("clu_a"),
    aSession("ses_paused").named("s-paused").ownedBy("usr_alice").onCluster("clu_a").paused(),
    aSession("ses_on_b").named("s-on-b").ownedBy("usr_alice").onCluster("clu_b"),
  ]);
  clusters = new FakeClusters();
  clock = new TestClock();
  deps = { db: tdb.db, clock, sessions, clusters, tokenTtlSeconds: 60 };
});

const tokenOf = (link: string): string => new URL(link).searchParams.get("svc_cnx") ?? "";

async function refusal(p: Promise<unknown>): Promise<{ code: string; details: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    const err = e as { code: string; details: Record<string, unknown> };
    return { code: err.code, details: err.details };
  }
  throw new Error("expected a refusal");
}

describe("issuing connect links", () => {
  it("gives three links on the session's cluster's session domain, each with its own token", async () => {
    const r = await issueConnectLinks(deps, alice, "ses_a");
    expect(r.links.lab).toMatch(/^https:\/\/a\.sessions\.test:9443\/proxy\/s-a\/lab\?svc_cnx=cnx_/);
    expect(r.links.terminal).toMatch(/^https:\/\/a\.sessions\.test:9443\/proxy\/s-a\/terminal\?svc_cnx=cnx_/);
    expect(r.links.code).toMatch(/^https:\/\/a\.sessions\.test:9443\/proxy\/s-a\/code\/\?svc_cnx=cnx_/);
    expect(new Set(Object.values(r.links).map(tokenOf)).size).toBe(3);
    expect(r.expiresAt.getTime() - clock.now().getTime()).toBe(60_000);
  });

  it("follows the cluster's session domain when it changes", async () => {
    clusters.map.set("clu_a", { id: "clu_a", sessionDomain: "new.example.test" });
    const r = await issueConnectLinks(deps, alice, "ses_a");
    expect(new URL(r.links.lab).host).toBe("new.example.test");
  });

  it("stores only hashes: no column holds the token", async () => {
    const r = await issueConnectLinks(deps, alice, "ses_a");
    const dump = JSON.stringify(await tdb.db("connect_tokens").select("*"));
    for (const link of Object.values(r.links)) expect(dump).not.toContain(tokenOf(link).slice(4));
  });

  it("refuses another user's session as not found", async () => {
    expect(await refusal(issueConnectLinks(deps, bob, "ses_a"))).toMatchObject({ code: "not_found" });
  });

  it("refuses someone who may see the session but is not its owner", async () => {
    const root = aPrincipal("usr_root", { isSuperAdmin: true });
    expect(await refusal(issueConnectLinks(deps, root, "ses_a"))).toMatchObject({
      code: "forbidden",
      details: { reason: "not_owner" },
    });
  });

  it("refuses a paused session with session_not_running", async () => {
    expect(await refusal(issueConnectLinks(deps, alice, "ses_paused"))).toMatchObject({
      code: "conflict",
      details: { reason: "session_not_running", phase: "Paused" },
    });
  });

  it("cannot store a token that lives longer than 60 s", async () => {
    await expect(issueConnectLinks({ ...deps, tokenTtlSeconds: 3600 }, alice, "ses_a")).resolves.toBeDefined();
    const rows = await tdb.db("connect_tokens").select("created_at", "expires_at");
    for (const r of rows) expect(r.expires_at.getTime() - r.created_at.getTime()).toBeLessThanOrEqual(60_000);
    await expect(
      tdb.db("connect_tokens").insert({
        token_hash: Buffer.alloc(32, 7),
        session_id: "x",
        cr_name: "x",
        cluster_id: "x",
        user_id: "x",
        link: "lab",
        created_at: new Date(0),
        expires_at: new Date(61_000),
      }),
    ).rejects.toThrow(/connect_tokens_ttl_at_most_60s/);
  });
});

describe("redeeming a connect token", () => {
  it("grants the session, user and cluster it was issued for", async () => {
    const r = await issueConnectLinks(deps, alice, "ses_a");
    const g = await verifyConnectToken(deps, { clusterId: "clu_a", crName: "s-a", token: tokenOf(r.links.lab) });
    expect(g).toEqual({ sessionId: "ses_a", crName: "s-a", clusterId: "clu_a", userId: "usr_alice", phase: "Running" });
  });

  it("works once: the second use is token_used", async () => {
    const t = tokenOf((await issueConnectLinks(deps, alice, "ses_a")).links.lab);
    await verifyConnectToken(deps, { clusterId: "clu_a", crName: "s-a", token: t });
    expect(await refusal(verifyConnectToken(deps, { clusterId: "clu_a", crName: "s-a", token: t }))).toMatchObject({
      code: "forbidden",
      details: { reason: "token_used" },
    });
  });

  it("succeeds exactly once out of 100 parallel redemptions spread over four replicas' pools", async () => {
    const t = tokenOf((await issueConnectLinks(deps, alice, "ses_a")).links.terminal);
    const replicas: Db[] = Array.from({ length: 4 }, () => connect(tdb.url, { poolMax: 10 }));
    try {
      const results = await Promise.allSettled(
        Array.from({ length: 100 }, (_, i) =>
          verifyConnectToken({ ...deps, db: replicas[i % 4] as Db }, { clusterId: "clu_a", crName: "s-a", token: t }),
        ),
      );
      const ok = results.filter((r) => r.status === "fulfilled");
      const used = results.filter(
        (r) => r.status === "rejected" && (r.reason as { details: { reason: string } }).details.reason === "token_used",
      );
      expect(ok).toHaveLength(1);
      expect(used).toHaveLength(99);
    } finally {
      await Promise.all(replicas.map((r) => r.destroy()));
    }
  });

  it("refuses an expired token as token_expired", async () => {
    const t = tokenOf((await issueConnectLinks(deps, alice, "ses_a")).links.lab);
    clock.advance(60_000);
    expect(await refusal(verifyConnectToken(deps, { clusterId: "clu_a", crName: "s-a", token: t }))).toMatchObject({
      details: { reason: "token_expired" },
    });
  });

  it("refuses a token for session A presented on session B, and does not spend it", async () => {
    const t = tokenOf((await issueConnectLinks(deps, alice, "ses_a")).links.lab);
    expect(await refusal(verifyConnectToken(deps, { clusterId: "clu_a", crName: "s-b", token: t }))).toMatchObject({
      details: { reason: "other_session" },
    });
    await expect(verifyConnectToken(deps, { clusterId: "clu_a", crName: "s-a", token: t })).resolves.toMatchObject({
      sessionId: "ses_a",
    });
  });

  it("refuses a token presented to another cluster's gateway", async () => {
    const t = tokenOf((await issueConnectLinks(deps, alice, "ses_on_b")).links.lab);
    expect(await refusal(verifyConnectToken(deps, { clusterId: "clu_a", crName: "s-on-b", token: t }))).toMatchObject({
      details: { reason: "other_cluster" },
    });
  });

  it("refuses garbage and unknown tokens without telling them apart from each other's content", async () => {
    expect(
      await refusal(verifyConnectToken(deps, { clusterId: "clu_a", crName: "s-a", token: "hello" })),
    ).toMatchObject({ details: { reason: "token_invalid" } });
    expect(
      await refusal(verifyConnectToken(deps, { clusterId: "clu_a", crName: "s-a", token: `cnx_${"A".repeat(43)}` })),
    ).toMatchObject({ details: { reason: "token_unknown" } });
  });

  it("refuses, clearly, a session paused after the link was issued", async () => {
    const t = tokenOf((await issueConnectLinks(deps, alice, "ses_a")).links.lab);
    sessions.set("ses_a", { phase: "Paused" });
    expect(await refusal(verifyConnectToken(deps, { clusterId: "clu_a", crName: "s-a", token: t }))).toMatchObject({
      code: "conflict",
      details: { reason: "session_not_running", phase: "Paused" },
    });
  });

  it("refuses a session that is gone", async () => {
    const t = tokenOf((await issueConnectLinks(deps, alice, "ses_a")).links.lab);
    sessions.map.delete("ses_a");
    expect(await refusal(verifyConnectToken(deps, { clusterId: "clu_a", crName: "s-a", token: t }))).toMatchObject({
      code: "not_found",
      details: { reason: "session_gone" },
    });
  });
});

describe("checking a grant (cookie renewal)", () => {
  it("renews for the owner of a running session", async () => {
    await expect(
      checkConnectGrant(deps, { clusterId: "clu_a", crName: "s-a", sessionId: "ses_a", userId: "usr_alice" }),
    ).resolves.toMatchObject({ phase: "Running" });
  });
  it("refuses another user, another session's name, another cluster and a paused session", async () => {
    expect(
      await refusal(
        checkConnectGrant(deps, { clusterId: "clu_a", crName: "s-a", sessionId: "ses_a", userId: "usr_bob" }),
      ),
    ).toMatchObject({ details: { reason: "not_allowed" } });
    expect(
      await refusal(
        checkConnectGrant(deps, { clusterId: "clu_a", crName: "s-b", sessionId: "ses_a", userId: "usr_alice" }),
      ),
    ).toMatchObject({ details: { reason: "other_session" } });
    expect(
      await refusal(
        checkConnectGrant(deps, { clusterId: "clu_b", crName: "s-a", sessionId: "ses_a", userId: "usr_alice" }),
      ),
    ).toMatchObject({ details: { reason: "session_moved" } });
    expect(
      await refusal(
        checkConnectGrant(deps, {
          clusterId: "clu_a",
          crName: "s-paused",
          sessionId: "ses_paused",
          userId: "usr_alice",
        }),
      ),
    ).toMatchObject({ details: { reason: "session_not_running" } });
  });
});
