import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./db.test-support.ts";
import { connect, migrateLatest } from "./knex.ts";
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
