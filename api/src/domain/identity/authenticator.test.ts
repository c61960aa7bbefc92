// The authenticator keeps loaded principals a few seconds (principalCache.ts). These cases show that the
// cache never outlives a revocation or a role change made in the same process, and that a change it
// cannot hear of (another replica's) is seen within the cache's lifetime and no later.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db/db.test-support.ts";
import { upsertMembership } from "../../db/operations/memberships/upsertMembership.ts";
import { TestClock } from "../../http/http.test-support.ts";
import { createAuthenticator } from "./authenticator.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  startIdentityTestApi,
  type TestUser,
} from "./identity.test-support.ts";
import type { PrincipalRecord } from "./loadPrincipal.ts";
import { PrincipalCache } from "./principalCache.ts";
import { AccessTokens } from "./tokens.ts";

const TTL_SECONDS = 5; // the default of BERTH_PRINCIPAL_CACHE_SECONDS, which startIdentityTestApi keeps

describe("authentication through the principal cache", () => {
  let t: IdentityTestApi;
  let w: IdentityWorld;
  /** Principal loads (the users + memberships read) sent to Postgres. */
  let loads = 0;
  beforeAll(async () => {
    t = await startIdentityTestApi();
    w = await anIdentityWorld(t);
    t.database.db.on("query", (q: { sql: string }) => {
      if (q.sql.includes("json_agg")) loads += 1;
    });
  });
  afterAll(async () => {
    await t?.stop();
  });

  const status = async (method: string, path: string, token: string, json?: unknown) =>
    (await t.request(method, path, { token, ...(json !== undefined ? { json } : {}) })).status;
  const usersSeenBy = async (u: TestUser) =>
    (await t.request("GET", "/api/v1/users?size=100", { token: u.token })).body.pagination.total as number;
  /** A fresh account in organization A with `role`, whose principal is cached by one request. */
  const aCachedMemberOfA = async (role: "member" | "org_admin" = "member") => {
    const u = await t.aUser();
    await t.member(u, w.orgA.id, null, role);
    expect(await status("GET", "/api/v1/users", u.token)).toBe(200);
    return u;
  };

  it("loads a principal once and then serves it from the cache", async () => {
    const u = await aCachedMemberOfA();
    const before = loads;
    for (let i = 0; i < 5; i++) expect(await status("GET", "/api/v1/users", u.token)).toBe(200);
    expect(loads).toBe(before);
  });

  it("refuses a disabled account on its very next request", async () => {
    const u = await aCachedMemberOfA();
    expect(await status("PATCH", `/api/v1/users/${u.id}`, w.adminA.token, { disabled: true })).toBe(200);
    const r = await t.request("GET", "/api/v1/users", { token: u.token });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("unauthenticated");
  });

  it("refuses a deleted account on its very next request", async () => {
    const u = await aCachedMemberOfA();
    expect(await status("DELETE", `/api/v1/users/${u.id}`, w.superAdmin.token)).toBe(204);
    expect(await status("GET", "/api/v1/users", u.token)).toBe(401);
  });

  it("refuses the tokens an administrator's password reset revoked, and takes the new sign-in", async () => {
    const u = await aCachedMemberOfA();
    expect(await status("PATCH", `/api/v1/users/${u.id}`, w.adminA.token, { password: "a reset password 1" })).toBe(
      200,
    );
    expect(await status("GET", "/api/v1/users", u.token)).toBe(401);
    const login = await t.request("POST", "/api/v1/auth/login", {
      json: { email: u.email, password: "a reset password 1" },
    });
    // The new token works at once, and carries the pending password change the reset set.
    const r = await t.request("GET", "/api/v1/users", { token: login.body.access_token });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("password_change_required");
  });

  it("refuses the old token after the user changes its own password; the new one works", async () => {
    const u = await aCachedMemberOfA();
    const changed = await t.request("POST", "/api/v1/auth/password", {
      token: u.token,
      json: { current_password: u.password, new_password: "another long passphrase" },
    });
    expect(changed.status).toBe(200);
    expect(await status("GET", "/api/v1/users", u.token)).toBe(401);
    expect(await status("GET", "/api/v1/users", changed.body.access_token)).toBe(200);
  });

  it("applies a promotion and a demotion in an organization at the next request", async () => {
    const u = await aCachedMemberOfA("member");
    const rename = (name: string) => status("PATCH", `/api/v1/organizations/${w.orgA.id}`, u.token, { name });
    expect(await rename("Org A, renamed by a member")).toBe(403);
    expect(
      await status("POST", `/api/v1/organizations/${w.orgA.id}/members`, w.adminA.token, {
        user_id: u.id,
        role: "org_admin",
      }),
    ).toBe(200);
    expect(await rename("Org A")).toBe(200);
    expect(
      await status("POST", `/api/v1/organizations/${w.orgA.id}/members`, w.adminA.token, {
        user_id: u.id,
        role: "member",
      }),
    ).toBe(200);
    expect(await rename("Org A, renamed by a demoted admin")).toBe(403);
  });

  it("hides an organization at once from someone removed from it", async () => {
    const u = await aCachedMemberOfA();
    expect(await status("GET", `/api/v1/organizations/${w.orgA.id}`, u.token)).toBe(200);
    expect(await status("DELETE", `/api/v1/organizations/${w.orgA.id}/members/${u.id}`, w.adminA.token)).toBe(204);
    expect(await status("GET", `/api/v1/organizations/${w.orgA.id}`, u.token)).toBe(404);
  });

  it("widens and narrows the user list at once when super_admin is granted and removed", async () => {
    const u = await t.aUser();
    expect(await usersSeenBy(u)).toBe(1);
    expect(await status("PATCH", `/api/v1/users/${u.id}`, w.superAdmin.token, { is_super_admin: true })).toBe(200);
    expect(await usersSeenBy(u)).toBeGreaterThan(1);
    expect(await status("PATCH", `/api/v1/users/${u.id}`, w.superAdmin.token, { is_super_admin: false })).toBe(200);
    expect(await usersSeenBy(u)).toBe(1);
  });

  describe("a change this process is not told of (made through another replica)", () => {
    it("is seen once the cache's lifetime has passed, not later", async () => {
      const u = await aCachedMemberOfA();
      // Straight to the table: no identityChanged, as when another replica makes the change.
      await t.database.db("users").where({ id: u.id }).update({ disabled: true });
      expect(await status("GET", "/api/v1/users", u.token)).toBe(200); // the documented bound: up to TTL
      t.clock.advance(TTL_SECONDS);
      expect(await status("GET", "/api/v1/users", u.token)).toBe(401);
    });

    it("never refuses a token newer than the cached account: a refusal is decided on a fresh read", async () => {
      const u = await aCachedMemberOfA();
      await t.database.db("users").where({ id: u.id }).increment("token_version", 1);
      expect(await status("GET", "/api/v1/users", await t.tokenFor(u.id))).toBe(200);
      // That fresh read replaced the cached account: the revoked token is refused at once too.
      expect(await status("GET", "/api/v1/users", u.token)).toBe(401);
    });
  });
});

describe("a write inside a transaction", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("is seen once it commits, even after a request read and cached the old rows meanwhile", async () => {
    const clock = new TestClock(new Date());
    const tokens = new AccessTokens({ secret: "a-test-secret-a-test-secret-a-test!!", now: () => clock.now() });
    const authenticate = createAuthenticator({ db: db.db, tokens, clock });
    await db.db("organizations").insert({ id: "org_tx", name: "Tx", slug: "tx" });
    await db
      .db("users")
      .insert({ id: "usr_tx", email: "tx@example.test", password_hash: "unused", must_change_password: false });
    await upsertMembership(db.db, { userId: "usr_tx", organizationId: "org_tx", projectId: null, role: "member" });
    const { token } = await tokens.issue({ userId: "usr_tx", tokenVersion: 0 });
    const roleNow = async () => (await authenticate({} as never, token)).memberships[0]?.role;

    await db.db.transaction(async (trx) => {
      await upsertMembership(trx, { userId: "usr_tx", organizationId: "org_tx", projectId: null, role: "org_admin" });
      // Another connection, before the commit: it reads (and the cache keeps) the old role.
      expect(await roleNow()).toBe("member");
    });
    expect(await roleNow()).toBe("org_admin");
  });
});

describe("PrincipalCache", () => {
  const record = (userId: string): PrincipalRecord => ({
    principal: {
      userId,
      email: `${userId}@example.test`,
      isSuperAdmin: false,
      mustChangePassword: false,
      memberships: [],
    },
    disabled: false,
    tokenVersion: 0,
  });
  /** A cache over a loader whose reads the test finishes by hand. */
  const aCache = (opts: { ttlMs?: number; maxEntries?: number } = {}) => {
    let now = 0;
    const pending: { userId: string; finish: () => void }[] = [];
    const cache = new PrincipalCache({
      ttlMs: opts.ttlMs ?? 5000,
      now: () => now,
      ...(opts.maxEntries ? { maxEntries: opts.maxEntries } : {}),
      load: (userId) => new Promise((resolve) => pending.push({ userId, finish: () => resolve(record(userId)) })),
    });
    const finishAll = () => {
      for (const p of pending.splice(0)) p.finish();
    };
    return { cache, pending, finishAll, advance: (ms: number) => (now += ms) };
  };

  it("shares one read among simultaneous misses of the same user", async () => {
    const { cache, pending, finishAll } = aCache();
    const a = cache.load("usr_a");
    const b = cache.load("usr_a");
    expect(pending).toHaveLength(1);
    finishAll();
    expect(await a).toBe(await b);
    expect(cache.get("usr_a")?.principal.userId).toBe("usr_a");
  });

  it("reads the misses of different users in one turn together when it can load many", async () => {
    const reads: string[][] = [];
    const cache = new PrincipalCache({
      ttlMs: 5000,
      now: () => 0,
      load: () => Promise.reject(new Error("one at a time is not used when loadMany is given")),
      loadMany: async (ids) => {
        reads.push([...ids]);
        return new Map(ids.filter((id) => id !== "usr_gone").map((id) => [id, record(id)]));
      },
    });
    const [a, b, again, gone] = await Promise.all(["usr_a", "usr_b", "usr_a", "usr_gone"].map((id) => cache.load(id)));
    expect(reads).toEqual([["usr_a", "usr_b", "usr_gone"]]);
    expect([a?.principal.userId, b?.principal.userId, gone]).toEqual(["usr_a", "usr_b", undefined]);
    expect(again).toBe(a);
    expect(cache.get("usr_b")).toBeDefined();
    // The next turn's misses are a read of their own.
    await cache.load("usr_c");
    expect(reads).toEqual([["usr_a", "usr_b", "usr_gone"], ["usr_c"]]);
  });

  it("does not keep a read that was under way when the user changed", async () => {
    const { cache, pending, finishAll } = aCache();
    const stale = cache.load("usr_a");
    cache.identityChanged("usr_a");
    // A request after the change starts its own read rather than joining the stale one.
    const fresh = cache.load("usr_a");
    expect(pending).toHaveLength(2);
    pending[0]?.finish();
    await stale;
    expect(cache.get("usr_a")).toBeUndefined();
    finishAll();
    await fresh;
    expect(cache.get("usr_a")).toBeDefined();
  });

  it("forgets everyone on a change that may touch anyone (a cascade)", async () => {
    const { cache, finishAll } = aCache();
    const loading = [cache.load("usr_a"), cache.load("usr_b")];
    finishAll();
    await Promise.all(loading);
    cache.identityChanged(null);
    expect(cache.size).toBe(0);
  });

  it("lets an entry expire after its lifetime", async () => {
    const { cache, finishAll, advance } = aCache({ ttlMs: 5000 });
    const p = cache.load("usr_a");
    finishAll();
    await p;
    advance(4999);
    expect(cache.get("usr_a")).toBeDefined();
    advance(1);
    expect(cache.get("usr_a")).toBeUndefined();
  });

  it("keeps at most maxEntries, dropping the oldest", async () => {
    const { cache, finishAll } = aCache({ maxEntries: 2 });
    for (const id of ["usr_a", "usr_b", "usr_c"]) {
      const p = cache.load(id);
      finishAll();
      await p;
    }
    expect([cache.get("usr_a"), cache.get("usr_b"), cache.get("usr_c")].map((r) => r?.principal.userId)).toEqual([
      undefined,
      "usr_b",
      "usr_c",
    ]);
  });

  it("hands out principals nobody can change in place", async () => {
    const { cache, finishAll } = aCache();
    const p = cache.load("usr_a");
    finishAll();
    await p;
    const cached = cache.get("usr_a");
    expect(Object.isFrozen(cached?.principal)).toBe(true);
    expect(Object.isFrozen(cached?.principal.memberships)).toBe(true);
  });

  it("keeps nothing with a lifetime of 0", async () => {
    const { cache, finishAll } = aCache({ ttlMs: 0 });
    const p = cache.load("usr_a");
    finishAll();
    await p;
    expect(cache.get("usr_a")).toBeUndefined();
  });
});
