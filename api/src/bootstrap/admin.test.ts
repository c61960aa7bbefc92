import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "../config.test-support.ts";
import { createTestDatabase, type TestDatabase } from "../db/db.test-support.ts";
import { type RunningApi, startApi } from "../main.ts";
import { ensureBootstrapAdmin } from "./admin.ts";
import { bootstrapAdminTask } from "./index.ts";

describe("the bootstrap administrator", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t?.drop();
  });

  it("is created once, as a super_admin who must change the given password", async () => {
    const first = await ensureBootstrapAdmin(t.db, { email: "Admin@Berth.local", password: "a configured password" });
    expect(first).toMatchObject({ created: true, email: "admin@berth.local", userId: expect.stringMatching(/^usr_/) });
    expect(first.generatedPassword).toBeUndefined();
    const row = await t.db("users").where({ email: "admin@berth.local" }).first();
    expect(row).toMatchObject({ is_super_admin: true, must_change_password: true, disabled: false });
    expect(row.password_hash).toMatch(/^\$argon2id\$/);

    const second = await ensureBootstrapAdmin(t.db, { email: "admin@berth.local", password: "a configured password" });
    expect(second.created).toBe(false);
    expect(await t.db("users").where({ is_super_admin: true })).toHaveLength(1);
  });

  it("is not made again after it was renamed or deleted, nor under another email", async () => {
    await t.db("users").where({ email: "admin@berth.local" }).del();
    expect((await ensureBootstrapAdmin(t.db, { email: "admin@berth.local" })).created).toBe(false);
    expect((await ensureBootstrapAdmin(t.db, { email: "other@berth.local" })).created).toBe(false);
    expect(await t.db("users").where({ is_super_admin: true })).toHaveLength(0);
  });
});

describe("two replicas starting at once on a fresh database", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t?.drop();
  });

  it("create exactly one administrator", async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, () => ensureBootstrapAdmin(t.db, { email: "admin@berth.local" })),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await t.db("users")).toHaveLength(1);
  });
});

describe("starting the API", () => {
  let t: TestDatabase;
  const started: RunningApi[] = [];
  beforeAll(async () => {
    t = await createTestDatabase({ migrate: false });
  });
  afterAll(async () => {
    await Promise.all(started.map((a) => a.stop()));
    await t?.drop();
  });

  it("prints a generated password once; it signs in, must be changed, and a restart creates nothing", async () => {
    const printed: string[] = [];
    const task = bootstrapAdminTask({ announce: (text) => printed.push(text) });
    const config = testConfig({ DATABASE_URL: t.url });
    const log = pino({ level: "silent" });
    const api = await startApi({ config, log, startupTasks: [task] });
    started.push(api);
    expect(printed).toHaveLength(1);
    const password = /password: (\S+)/.exec(printed[0] ?? "")?.[1];
    expect(password).toBeDefined();
    expect(printed[0]).toContain("admin@berth.local");

    const login = await fetch(`${api.url}/api/v1/auth/login`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ email: "admin@berth.local", password }),
    });
    const body = (await login.json()) as { access_token: string; must_change_password: boolean };
    expect(login.status).toBe(200);
    expect(body.must_change_password).toBe(true);
    const users = await fetch(`${api.url}/api/v1/users`, { headers: { Authorization: `Bearer ${body.access_token}` } });
    expect(users.status).toBe(403);
    expect(((await users.json()) as { error: { code: string } }).error.code).toBe("password_change_required");

    const again = await startApi({ config, log, startupTasks: [task] });
    started.push(again);
    expect(printed).toHaveLength(1);
    expect(await t.db("users")).toHaveLength(1);
  });
});
