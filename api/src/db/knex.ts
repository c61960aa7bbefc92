import knexFactory, { type Knex } from "knex";
import { migrations } from "./migrations/index.ts";
import { installTimestamptzParser } from "./timestamptz.ts";

// Process-wide (pg keeps one table of type parsers): every connection parses timestamptz the fast way.
installTimestamptzParser();

export type Db = Knex;

export function connect(url: string, opts: { poolMax?: number } = {}): Db {
  return knexFactory({
    client: "pg",
    connection: url,
    pool: { min: 0, max: opts.poolMax ?? 20 },
    // Amounts are bigint minor units: return them as strings, never as lossy numbers.
    postProcessResponse: undefined,
  });
}

/** knex migration source over an explicit, ordered list (no file globbing, no loader quirks). */
const source: Knex.MigrationSource<(typeof migrations)[number]> = {
  getMigrations: async () => migrations,
  getMigrationName: (m) => m.name,
  getMigration: async (m) => ({
    up: m.up,
    down: async () => {
      throw new Error("migrations are forward-only");
    },
  }),
};

export async function migrateLatest(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource: source })) as [number, string[]];
  return applied;
}
