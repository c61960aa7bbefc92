import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./db.test-support.ts";
import { connect, migrateLatest, schemaGap, waitForSchema } from "./knex.ts";
import { RAISE_EXCEPTION, sqlState } from "./sqlstate.ts";

describe("the Postgres layer", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t?.drop();
  });

  it("runs on a real server and applies the migrations once", async () => {
    const { rows } = await t.db.raw("select version()");
    expect(rows[0].version).toMatch(/^PostgreSQL 1\d/);
    expect(await migrateLatest(t.db)).toEqual([]);
  });

  it("refuses to update or delete audit rows", async () => {
    await t.db("audit_log").insert({ actor_kind: "system", action: "test.write", outcome: "success" });
    const err = await t
      .db("audit_log")
      .update({ action: "changed" })
      .catch((e) => e);
    expect(sqlState(err)).toBe(RAISE_EXCEPTION);
    const del = await t
      .db("audit_log")
      .del()
      .catch((e) => e);
    expect(sqlState(del)).toBe(RAISE_EXCEPTION);
  });

  it("refuses a database a later version migrated, naming its migrations (a rollback across a migration)", async () => {
    const later = "29991231000000_from_a_later_version";
    await t.db("knex_migrations").insert({ name: later, batch: 99, migration_time: new Date() });
    try {
      const e = await migrateLatest(t.db).catch((x: Error) => x);
      expect(e).toBeInstanceOf(Error);
      expect((e as Error).message).toMatch(
        new RegExp(
          `^the database was migrated by a later version of Berth \\(${later}\\): migrations are forward-only`,
        ),
      );
    } finally {
      await t.db("knex_migrations").where({ name: later }).del();
    }
    expect(await migrateLatest(t.db)).toEqual([]);
  });

  it("lets a worker start only on the schema it knows: it waits for the API's migration and refuses a later one", async () => {
    expect(await schemaGap(t.db)).toEqual({ pending: [], newer: [] });
    const [last] = await t.db("knex_migrations").select("*").orderBy("id", "desc").limit(1);
    await t.db("knex_migrations").where({ id: last.id }).del();
    try {
      // No API of this version yet: the worker says which migrations it lacks when its wait ends.
      const gone = await waitForSchema(t.db, { timeoutMs: 0 }).catch((x: Error) => x);
      expect((gone as Error).message).toMatch(
        new RegExp(`^the database lacks 1 migration\\(s\\) this version needs \\(${last.name}\\)`),
      );
      // It waits until the migration is recorded, then starts.
      const lines: string[] = [];
      let done = false;
      const waiting = waitForSchema(t.db, {
        timeoutMs: 60_000,
        intervalMs: 50,
        log: { info: (_o, m) => lines.push(m) },
      }).then(() => {
        done = true;
      });
      await expect.poll(() => lines).toContain("waiting for the API to migrate the database");
      expect(done).toBe(false);
      await t.db("knex_migrations").insert({ name: last.name, batch: last.batch, migration_time: last.migration_time });
      await waiting;
      expect(lines).toEqual(["waiting for the API to migrate the database", "the database is migrated"]);
    } finally {
      if ((await t.db("knex_migrations").where({ name: last.name })).length === 0)
        await t
          .db("knex_migrations")
          .insert({ name: last.name, batch: last.batch, migration_time: last.migration_time });
    }
    const later = "29991231000000_from_a_later_version";
    await t.db("knex_migrations").insert({ name: later, batch: 99, migration_time: new Date() });
    try {
      const e = await waitForSchema(t.db, { timeoutMs: 60_000 }).catch((x: Error) => x);
      expect((e as Error).message).toMatch(
        /^the database was migrated by a later version of Berth \(29991231000000_from_a_later_version\)/,
      );
    } finally {
      await t.db("knex_migrations").where({ name: later }).del();
    }
  });

  it("two processes migrating a new database at once apply each migration once, one after the other", async () => {
    const fresh = await createTestDatabase({ migrate: false });
    const a = connect(fresh.url, { poolMax: 2 });
    const b = connect(fresh.url, { poolMax: 2 });
    try {
      const [first, second] = await Promise.all([migrateLatest(a), migrateLatest(b)]);
      expect([first.length, second.length].sort((x, y) => x - y)).toEqual([0, first.length || second.length]);
      expect(first.length + second.length).toBeGreaterThan(20);
      expect(await migrateLatest(a)).toEqual([]);
    } finally {
      await Promise.all([a.destroy(), b.destroy()]);
      await fresh.drop();
    }
  });
});
