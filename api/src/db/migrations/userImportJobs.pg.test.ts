// 20261129150000 on real Postgres: imports recorded before it (every row's result in one jsonb column) keep
// their rows, in order, in user_import_rows, and read as ended jobs with nothing held.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../db.test-support.ts";
import { migrateLatest } from "../knex.ts";
import { migrations } from "./index.ts";

const JOBS = "20261129150000_user_import_jobs";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase({ migrate: false });
  const upTo = migrations.slice(
    0,
    migrations.findIndex((m) => m.name === JOBS),
  );
  await t.db.migrate.latest({
    migrationSource: {
      getMigrations: async () => upTo,
      getMigrationName: (m: (typeof upTo)[number]) => m.name,
      getMigration: async (m: (typeof upTo)[number]) => ({ up: m.up, down: async () => {} }),
    },
  });
}, 120_000);
afterAll(async () => t?.drop());

describe(JOBS, () => {
  it("moves earlier imports' results into user_import_rows, in the file's order, as ended jobs", async () => {
    const rows = [
      { line: 2, email: "a@x.test", outcome: "create" },
      { line: 3, email: "b@x.test", outcome: "error", code: "invalid_email" },
    ];
    const at = new Date("2026-11-29T10:00:00Z");
    await t.db("user_imports").insert({
      id: "imp_legacy000000000000",
      actor_id: "usr_someone",
      organization_ids: [],
      dry_run: false,
      counts: JSON.stringify({ create: 1, update: 0, unchanged: 0, error: 1 }),
      results: JSON.stringify(rows),
      created_at: at,
    });
    await migrateLatest(t.db);
    const job = await t.db("user_imports").where({ id: "imp_legacy000000000000" }).first();
    expect(job).toMatchObject({ state: "succeeded", rows_total: 2, passwords: "none", csv: null });
    expect(job.finished_at).toEqual(at);
    const moved = await t.db("user_import_rows").where({ import_id: job.id }).orderBy("idx");
    expect(moved.map((r) => [r.idx, r.outcome, r.result])).toEqual([
      [0, "create", rows[0]],
      [1, "error", rows[1]],
    ]);
  });
});
