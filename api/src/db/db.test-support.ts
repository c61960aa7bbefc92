// Test helper: a fresh database on a real server. vitest's global setup starts one embedded server per
// run (BERTH_TEST_PG_URL); without it (or with DATABASE_URL) each call still gets its own database.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type Db, migrateLatest } from "./knex.ts";
import { type PostgresServer, startPostgres } from "./server.ts";

export interface TestDatabase {
  db: Db;
  url: string;
  name: string;
  drop(): Promise<void>;
}

let local: { server: PostgresServer; dir: string } | undefined;

async function adminUrl(): Promise<string> {
  const given = process.env.DATABASE_URL ?? process.env.BERTH_TEST_PG_URL;
  if (given) return given;
  if (!local) {
    const dir = mkdtempSync(join(tmpdir(), "berth-pg-"));
    const server = await startPostgres({ dataDir: join(dir, "data") });
    local = { server, dir };
  }
  return local.server.url;
}

export async function createTestDatabase(opts: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const admin = await adminUrl();
  const name = `berth_test_${randomBytes(6).toString("hex")}`;
  const root = connect(admin, { poolMax: 1 });
  try {
    await root.raw(`CREATE DATABASE ${name}`);
  } finally {
    await root.destroy();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const db = connect(url.toString());
  if (opts.migrate !== false) await migrateLatest(db);
  return {
    db,
    url: url.toString(),
    name,
    async drop() {
      await db.destroy();
      const r = connect(admin, { poolMax: 1 });
      try {
        await r.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await r.destroy();
      }
      if (local && !process.env.BERTH_TEST_PG_URL) {
        await local.server.stop();
        rmSync(local.dir, { recursive: true, force: true });
        local = undefined;
      }
    },
  };
}
