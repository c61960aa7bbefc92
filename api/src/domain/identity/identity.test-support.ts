// Test support for identity: an in-process API with the real authenticator over a fresh database, a
// clock the test owns, and builders for users, organizations, projects and memberships.
import type { KubeConfig } from "@kubernetes/client-node";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { makeClusterClients } from "../../buildDeps.ts";
import { testConfig } from "../../config.test-support.ts";
import { createTestDatabase, type TestDatabase } from "../../db/db.test-support.ts";
import type { MembershipRole } from "../../db/operations/memberships/types.ts";
import { upsertMembership } from "../../db/operations/memberships/upsertMembership.ts";
import { insertOrganization } from "../../db/operations/organizations/insertOrganization.ts";
import type { OrganizationRow } from "../../db/operations/organizations/types.ts";
import { insertProject } from "../../db/operations/projects/insertProject.ts";
import type { ProjectRow } from "../../db/operations/projects/types.ts";
import { findUserById } from "../../db/operations/users/findUserById.ts";
import { insertUser } from "../../db/operations/users/insertUser.ts";
import type { Deps } from "../../deps.ts";
import { startTestApi, type TestApi, TestClock, testDeps } from "../../http/http.test-support.ts";
import { UserImportLoop } from "../../worker/userImports.ts";
import { createClustersRuntime } from "../clusters/runtime.ts";
import type { SessionsRuntime } from "../sessions/runtime.ts";
import { parseSecretKeys } from "../webhooks/secretBox.ts";
import { createAuthenticator } from "./authenticator.ts";
import { newId } from "./ids.ts";
import { slugify } from "./organizations.ts";
import { AccessTokens } from "./tokens.ts";

export interface TestUser {
  id: string;
  email: string;
  password: string;
  /** A valid access token, minted directly (no sign-in, so no throttle and no argon2 per test). */
  token: string;
}

export interface IdentityTestApi {
  api: TestApi;
  deps: Deps;
  clock: TestClock;
  database: TestDatabase;
  /** fetch + JSON: answers status, parsed body and headers. */
  request(
    method: string,
    path: string,
    opts?: { token?: string; json?: unknown; body?: string; headers?: Record<string, string> },
    // biome-ignore lint/suspicious/noExplicitAny: tests read any JSON answer by path; a type per route would repeat the contract
  ): Promise<{ status: number; body: any; headers: Headers }>;
  aUser(opts?: {
    email?: string;
    password?: string;
    superAdmin?: boolean;
    mustChangePassword?: boolean;
    disabled?: boolean;
  }): Promise<TestUser>;
  anOrganization(name?: string): Promise<OrganizationRow>;
  aProject(organizationId: string, name?: string): Promise<ProjectRow>;
  /** projectId null: the organization-level membership. */
  member(user: { id: string }, organizationId: string, projectId: string | null, role: MembershipRole): Promise<void>;
  tokenFor(userId: string): Promise<string>;
  /** A token that was valid once and expired a minute ago. */
  expiredTokenFor(userId: string): Promise<string>;
  /** With `userImports: true`: the worker's user-import loop, running on this database. */
  userImports?: UserImportLoop;
  stop(): Promise<void>;
}

let counter = 0;
const unique = () => `${Date.now().toString(36)}${(counter++).toString(36)}`;

export async function startIdentityTestApi(
  opts: {
    kubeConfig?: KubeConfig;
    sessions?: SessionsRuntime;
    env?: Record<string, string>;
    /** With kubeConfig: the clusters runtime too (cluster routes answer instead of 503). */
    clusters?: boolean;
    /** Run the worker's user-import loop (api/src/worker/userImports.ts) beside the API, as `npm start` does. */
    userImports?: boolean;
  } = {},
): Promise<IdentityTestApi> {
  const database = await createTestDatabase();
  const clock = new TestClock(new Date());
  const config = testConfig({ BERTH_ACCESS_TOKEN_TTL_SECONDS: "900", ...opts.env });
  const deps: Deps = testDeps({
    db: database.db,
    config,
    clock,
    authenticate: createAuthenticator({ db: database.db, config, clock }),
    ...(opts.kubeConfig ? { kubeConfig: opts.kubeConfig } : {}),
    ...(opts.sessions ? { sessions: opts.sessions } : {}),
    ...(opts.clusters && opts.kubeConfig
      ? {
          clusters: await createClustersRuntime({
            clients: makeClusterClients(opts.kubeConfig),
            db: database.db,
            clock,
          }),
        }
      : {}),
  });
  const api = await startTestApi(deps);
  const userImports = opts.userImports
    ? new UserImportLoop({
        db: database.db,
        log: pino({ level: "silent" }),
        clock,
        secretKeys: parseSecretKeys(config.webhooks.secretKeys.reveal()),
        intervalMs: 100,
      })
    : undefined;
  userImports?.start();
  const { hasher, tokens } = deps.auth;
  // One hash for every seeded user with the default password: seeding stays fast.
  const defaultPassword = "correct horse battery staple";
  const defaultHash = await hasher.hash(defaultPassword);

  const tokenFor = async (userId: string) => {
    const u = await findUserById(database.db, userId);
    if (!u) throw new Error(`no user ${userId}`);
    return (await tokens.issue({ userId, tokenVersion: u.token_version })).token;
  };

  return {
    api,
    deps,
    clock,
    database,
    async request(method, path, opts = {}) {
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
      let body: string | undefined = opts.body;
      if (opts.json !== undefined) {
        headers["Content-Type"] = "application/json";
        body = JSON.stringify(opts.json);
      } else if (body !== undefined && !headers["Content-Type"]) headers["Content-Type"] = "application/json";
      const res = await fetch(api.url + path, { method, headers, ...(body !== undefined ? { body } : {}) });
      const text = await res.text();
      return { status: res.status, body: text === "" ? null : JSON.parse(text), headers: res.headers };
    },
    async aUser(o = {}) {
      const password = o.password ?? defaultPassword;
      const email = o.email ?? `user-${unique()}@example.test`;
      const row = await insertUser(database.db, {
        id: newId("usr"),
        email,
        passwordHash: password === defaultPassword ? defaultHash : await hasher.hash(password),
        mustChangePassword: o.mustChangePassword ?? false,
        isSuperAdmin: o.superAdmin ?? false,
      });
      if (o.disabled) await database.db("users").where({ id: row.id }).update({ disabled: true });
      return { id: row.id, email, password, token: await tokenFor(row.id) };
    },
    async anOrganization(name) {
      const n = name ?? `Org ${unique()}`;
      return insertOrganization(database.db, {
        id: newId("org"),
        name: n,
        slug: `${slugify(n)}-${unique()}`.slice(0, 63),
      });
    },
    async aProject(organizationId, name) {
      return insertProject(database.db, { id: newId("prj"), organizationId, name: name ?? `Project ${unique()}` });
    },
    async member(user, organizationId, projectId, role) {
      await upsertMembership(database.db, { userId: user.id, organizationId, projectId, role });
    },
    tokenFor,
    async expiredTokenFor(userId) {
      const u = await findUserById(database.db, userId);
      if (!u) throw new Error(`no user ${userId}`);
      const past = new AccessTokens({
        secret: config.auth.jwtSecret.reveal(),
        ttlSeconds: config.auth.accessTokenTtlSeconds,
        now: () => new Date(clock.now().getTime() - (config.auth.accessTokenTtlSeconds + 60) * 1000),
      });
      return (await past.issue({ userId, tokenVersion: u.token_version })).token;
    },
    ...(userImports ? { userImports } : {}),
    async stop() {
      await userImports?.stop();
      await api.stop();
      await database.drop();
    },
  };
}

/** Two organizations with one project each, and one person in every role. */
export interface IdentityWorld {
  superAdmin: TestUser;
  orgA: OrganizationRow;
  orgB: OrganizationRow;
  projectA: ProjectRow;
  projectA2: ProjectRow;
  projectB: ProjectRow;
  /** org_admin of A */
  adminA: TestUser;
  /** org_admin of B */
  adminB: TestUser;
  /** project_admin of projectA */
  projectAdminA: TestUser;
  /** member of projectA (project-level) */
  memberA: TestUser;
  /** member of organization A (organization-level), in no project */
  orgMemberA: TestUser;
  /** member of projectB */
  memberB: TestUser;
  /** no memberships at all */
  outsider: TestUser;
}

export async function anIdentityWorld(t: IdentityTestApi): Promise<IdentityWorld> {
  const [superAdmin, adminA, adminB, projectAdminA, memberA, orgMemberA, memberB, outsider] = await Promise.all([
    t.aUser({ superAdmin: true }),
    t.aUser(),
    t.aUser(),
    t.aUser(),
    t.aUser(),
    t.aUser(),
    t.aUser(),
    t.aUser(),
  ]);
  const orgA = await t.anOrganization("Org A");
  const orgB = await t.anOrganization("Org B");
  const projectA = await t.aProject(orgA.id, "Project A");
  const projectA2 = await t.aProject(orgA.id, "Project A2");
  const projectB = await t.aProject(orgB.id, "Project B");
  await t.member(adminA, orgA.id, null, "org_admin");
  await t.member(adminB, orgB.id, null, "org_admin");
  await t.member(projectAdminA, orgA.id, projectA.id, "project_admin");
  await t.member(memberA, orgA.id, projectA.id, "member");
  await t.member(orgMemberA, orgA.id, null, "member");
  await t.member(memberB, orgB.id, projectB.id, "member");
  return {
    superAdmin,
    orgA,
    orgB,
    projectA,
    projectA2,
    projectB,
    adminA,
    adminB,
    projectAdminA,
    memberA,
    orgMemberA,
    memberB,
    outsider,
  };
}

/** A caller who may, and the status they get. */
interface Allowed {
  as: keyof IdentityWorld & string;
  status: number;
}

/**
 * One route, tried by everyone it concerns. `path` and `body` are called per request, so a destructive
 * route can make a fresh target for every caller.
 */
export interface RouteCase {
  name: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: (w: IdentityWorld) => string | Promise<string>;
  body?: (w: IdentityWorld) => unknown | Promise<unknown>;
  /** Callers who may (at least one: the expired-token and malformed-body cases call as the first). */
  allowed: [Allowed, ...Allowed[]];
  /** Callers who may not: 404 (outside their scope, existence not revealed) or 403 (visible, not theirs to change). */
  refused: { as: keyof IdentityWorld & string; status: 403 | 404; why: string }[];
  /** A body that fails validation (routes with a body). */
  malformed?: unknown;
  /** Waits out what an allowed call left running in the background (a job), before a refusal's digest. */
  settled?: (t: IdentityTestApi) => Promise<void>;
}

export const CODE_OF: Record<number, string> = { 403: "forbidden", 404: "not_found" };

/** Tables a refused request may write to: the record of the refusal, not the state it was refused. */
const BOOKKEEPING = new Set([
  "audit_log",
  "idempotency_keys",
  "login_failures",
  "knex_migrations",
  "knex_migrations_lock",
]);

/**
 * A digest of every row of every table but the bookkeeping ones: equal before and after a refused write
 * means it changed nothing (a handler that writes before it checks would pass a status-only assertion).
 */
export async function databaseDigest(t: IdentityTestApi): Promise<string> {
  const db = t.database.db;
  const tables = (
    await db.raw<{ rows: { table_name: string }[] }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
    )
  ).rows
    .map((r) => r.table_name)
    .filter((n) => !BOOKKEEPING.has(n));
  const parts: string[] = [];
  for (const table of tables) {
    const r = await db.raw<{ rows: { d: string | null }[] }>(
      "SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) AS d FROM ?? AS t",
      [table],
    );
    parts.push(`${table}:${r.rows[0]?.d ?? "empty"}`);
  }
  return parts.join("\n");
}

/**
 * Registers, per case: each allowed caller gets its status; each refused caller gets 403/404 with the
 * envelope; an expired token gets 401 token_expired; a malformed body gets 400 validation_failed.
 */
export function itBehavesPerRole(cases: RouteCase[], env: () => { t: IdentityTestApi; w: IdentityWorld }): void {
  for (const c of cases) {
    describe(`${c.method} ${c.name}`, () => {
      for (const a of c.allowed) {
        it(`answers ${a.status} to ${a.as}`, async () => {
          const { t, w } = env();
          const user = w[a.as] as TestUser;
          const r = await t.request(c.method, await c.path(w), {
            token: user.token,
            ...(c.body ? { json: await c.body(w) } : {}),
          });
          expect(r.status, JSON.stringify(r.body)).toBe(a.status);
        });
      }
      // A refused write is read back: the database is as it was (rows of every table, bookkeeping aside).
      const unchanged = async (t: IdentityTestApi, send: () => Promise<void>) => {
        if (c.method === "GET") return send();
        await c.settled?.(t);
        const before = await databaseDigest(t);
        await send();
        expect(await databaseDigest(t), "a refused write changed the database").toBe(before);
      };
      for (const f of c.refused) {
        it(`answers ${f.status} ${CODE_OF[f.status]} to ${f.as} (${f.why}), changing nothing`, async () => {
          const { t, w } = env();
          const user = w[f.as] as TestUser;
          const path = await c.path(w);
          const json = c.body ? await c.body(w) : undefined;
          await unchanged(t, async () => {
            const r = await t.request(c.method, path, { token: user.token, ...(json !== undefined ? { json } : {}) });
            expect(r.status, JSON.stringify(r.body)).toBe(f.status);
            expect(r.body.error.code).toBe(CODE_OF[f.status]);
          });
        });
      }
      it("answers 401 token_expired to an expired token, changing nothing", async () => {
        const { t, w } = env();
        const who = w[c.allowed[0].as] as TestUser;
        const path = await c.path(w);
        const json = c.body ? await c.body(w) : undefined;
        const token = await t.expiredTokenFor(who.id);
        await unchanged(t, async () => {
          const r = await t.request(c.method, path, { token, ...(json !== undefined ? { json } : {}) });
          expect(r.status).toBe(401);
          expect(r.body.error.code).toBe("token_expired");
        });
      });
      if (c.malformed !== undefined) {
        it("answers 400 validation_failed to a malformed body, changing nothing", async () => {
          const { t, w } = env();
          const who = w[c.allowed[0].as] as TestUser;
          const path = await c.path(w);
          await unchanged(t, async () => {
            const r = await t.request(c.method, path, { token: who.token, json: c.malformed });
            expect(r.status).toBe(400);
            expect(r.body.error.code).toBe("validation_failed");
            expect(r.body.error.details.issues.length).toBeGreaterThan(0);
          });
        });
      }
    });
  }
}
