import { setTimeout as sleep } from "node:timers/promises";
import knexFactory, { type Knex } from "knex";
import { migrations } from "./migrations/index.ts";
import { installTimestamptzParser } from "./timestamptz.ts";

// Process-wide (pg keeps one table of type parsers): every connection parses timestamptz the fast way.
installTimestamptzParser();

export type Db = Knex;

export interface ConnectOptions {
  poolMax?: number;
  /**
   * A query Postgres has not answered in this long fails as unreachable (503), and its connection is
   * closed: a partitioned or frozen server otherwise holds a request until TCP gives up, minutes later.
   * 0: none (migrations, main.ts).
   */
  queryTimeoutMs?: number;
  /** A connection Postgres has not accepted in this long fails as unreachable. */
  connectTimeoutMs?: number;
}

/** Longer than any query a request or the worker makes; short next to TCP's minutes. */
const QUERY_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 10_000;
const ACQUIRE_TIMEOUT_MS = 20_000;

export function connect(url: string, opts: ConnectOptions = {}): Db {
  return knexFactory({
    client: "pg",
    connection: {
      connectionString: url,
      query_timeout: opts.queryTimeoutMs ?? QUERY_TIMEOUT_MS,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    },
    pool: {
      min: 0,
      max: opts.poolMax ?? 20,
      afterCreate: (conn: PgClient, done: (err: Error | null, conn: PgClient) => void) => {
        closeOnQueryTimeout(conn);
        done(null, conn);
      },
      // Lent only when idle: a connection closed for a timeout can come back before its close is seen.
      validate: (conn: PgClient) => conn.readyForQuery === true,
    },
    // A request that waited this long for a connection is answered 503 (retry), not held longer: when
    // Postgres stops answering, the pool fills with queries waiting out their timeout.
    acquireConnectionTimeout: ACQUIRE_TIMEOUT_MS,
    // Amounts are bigint minor units: return them as strings, never as lossy numbers.
    postProcessResponse: undefined,
  });
}

/** What this file touches of a pg client: its query method, whether it is idle, its socket (pg's fields). */
interface PgClient {
  query: (...args: unknown[]) => unknown;
  readyForQuery?: boolean;
  connection?: { stream?: { destroy(): void } };
}

/**
 * pg answers a query that timed out with an error but keeps its connection, with the next query queued
 * behind the unanswered one: a transaction's ROLLBACK would wait a second timeout, and the pool would lend
 * the connection again. Closing the socket ends the connection: queued queries fail at once, knex drops it
 * from the pool, and Postgres rolls back whatever it had begun once it notices.
 */
function closeOnQueryTimeout(conn: PgClient): void {
  const query = conn.query.bind(conn);
  conn.query = (...args: unknown[]) => {
    const callback = args.at(-1);
    if (typeof callback === "function")
      args[args.length - 1] = (err: unknown, res: unknown) => {
        if (err instanceof Error && err.message === QUERY_TIMED_OUT) conn.connection?.stream?.destroy();
        callback(err, res);
      };
    return query(...args);
  };
}

/** pg's message for a query past query_timeout (db/unreachable.ts counts it as unreachable). */
const QUERY_TIMED_OUT = "Query read timeout";

/** How long the API and the worker wait for Postgres at start: on a first install its first start may take a minute. */
export const DATABASE_WAIT_MS = 120_000;

/**
 * Resolves once Postgres answers; until `timeoutMs`, a failure is logged and tried again with backoff. On a
 * first install Postgres starts beside the API and the worker, and a process that exited on its first
 * timeout cost the kubelet's restart back-off.
 */
export async function waitForDatabase(
  db: Db,
  o: { timeoutMs: number; log?: { warn(o: object, m: string): void; info(o: object, m: string): void } },
): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  let delay = 500;
  for (let attempt = 1; ; attempt++) {
    try {
      await db.raw("select 1");
      if (attempt > 1) o.log?.info({ attempt }, "Postgres answers");
      return;
    } catch (e) {
      const why = (e as Error).message;
      if (Date.now() + delay > deadline)
        throw new Error(`Postgres did not answer within ${Math.round(o.timeoutMs / 1000)} s: ${why}`, { cause: e });
      o.log?.warn({ attempt, why, retryInMs: delay }, "waiting for Postgres");
      await sleep(delay);
      delay = Math.min(5_000, delay * 2);
    }
  }
}

/** The advisory lock migrations take ("berth" in ASCII). */
const MIGRATION_LOCK = 0x6265727468;
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

/** Migrations this version knows that the database has not recorded, and recorded ones it does not know. */
export async function schemaGap(db: Db): Promise<{ pending: string[]; newer: string[] }> {
  const recorded: string[] = (await db.schema.hasTable("knex_migrations"))
    ? (await db("knex_migrations").select("name").orderBy("id")).map((r: { name: string }) => r.name)
    : [];
  const known = new Set(migrations.map((m) => m.name));
  const have = new Set(recorded);
  return {
    pending: migrations.map((m) => m.name).filter((n) => !have.has(n)),
    newer: recorded.filter((n) => !known.has(n)),
  };
}

/**
 * A database migrated by a later version (a rollback after an upgrade that migrated) is refused in words a
 * platform team can act on; knex's own check says only that "the migration directory is corrupt".
 */
function newerSchemaError(newer: string[]): Error {
  return new Error(
    `the database was migrated by a later version of Berth (${newer.join(", ")}): migrations are forward-only, so this version cannot run on it; apply the later version again, or restore the backup taken before the upgrade (docs/deploy.md, "Roll back")`,
  );
}

/**
 * The worker does not migrate; the API does. In a rolling upgrade a new worker can start before a new API
 * has migrated, and its queries would meet the old schema: it waits (up to `timeoutMs`) until every
 * migration it knows is recorded. A later version's migrations refuse it, as they refuse the API.
 */
export async function waitForSchema(
  db: Db,
  o: { timeoutMs: number; intervalMs?: number; log?: { info(o: object, m: string): void } },
): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  for (let said = false; ; said = true) {
    const { pending, newer } = await schemaGap(db);
    if (newer.length > 0) throw newerSchemaError(newer);
    if (pending.length === 0) {
      if (said) o.log?.info({}, "the database is migrated");
      return;
    }
    if (Date.now() >= deadline)
      throw new Error(
        `the database lacks ${pending.length} migration(s) this version needs (${pending.join(", ")}) after ${Math.round(o.timeoutMs / 1000)} s: the API applies them at its start; is an API of this version running?`,
      );
    if (!said) o.log?.info({ pending }, "waiting for the API to migrate the database");
    await sleep(o.intervalMs ?? 2_000);
  }
}

export async function migrateLatest(db: Db): Promise<string[]> {
  // Replicas starting together (an install's two APIs) migrate one at a time: knex's own lock lives in a
  // table the first run creates, and two creating it at once failed on Postgres' type catalogue; one
  // finding it held failed at once. The lock is the session's, on a connection of its own (the pool needs
  // another for the migrations).
  const conn = (await db.client.acquireConnection()) as { query(sql: string, values: unknown[]): Promise<unknown> };
  try {
    await conn.query("select pg_advisory_lock($1)", [MIGRATION_LOCK]);
    try {
      const { newer } = await schemaGap(db);
      if (newer.length > 0) throw newerSchemaError(newer);
      const [, applied] = (await db.migrate.latest({ migrationSource: source })) as [number, string[]];
      return applied;
    } finally {
      await conn.query("select pg_advisory_unlock($1)", [MIGRATION_LOCK]);
    }
  } finally {
    await db.client.releaseConnection(conn);
  }
}
