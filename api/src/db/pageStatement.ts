// A page's statement run as a named prepared statement on a pooled connection, its rows taken from pg's
// arrays without the total's column (page.ts). The I/O of paging; the SQL is built in pageSql.ts.
import { createHash } from "node:crypto";
import type { Knex } from "knex";
import { TOTAL } from "./pageSql.ts";
import { FEATURE_NOT_SUPPORTED, sqlState } from "./sqlstate.ts";

/** A page statement's rows without the total's column, and the total the rows carry (undefined: no row). */
export interface Carried {
  rows: Record<string, unknown>[];
  total: number | undefined;
}

/**
 * Rows as objects from pg's arrays, the total's column left out. Deleting that column from pg's own row
 * objects cost about 10 µs per page of 20 (and left slower objects behind).
 */
function fromArrays(fields: readonly { name: string }[], arrays: readonly unknown[][]): Carried {
  const names = fields.map((f) => f.name);
  const at = names.lastIndexOf(TOTAL);
  const rows = arrays.map((a) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      if (i !== at && name !== undefined) row[name] = a[i];
    }
    return row;
  });
  const first = arrays[0];
  return { rows, total: first === undefined ? undefined : Number(first[at]) };
}

/** The same from knex's row objects (a page in a transaction). */
function fromObjects(raw: Record<string, unknown>[]): Carried {
  const first = raw[0];
  if (first === undefined) return { rows: [], total: undefined };
  const total = Number(first[TOTAL]);
  for (const row of raw) delete row[TOTAL];
  return { rows: raw, total };
}

/** Named statements a pooled connection may keep; past it, queries go unnamed (IN lists vary in length). */
const MAX_PREPARED_PER_CONNECTION = 256;
/**
 * The fixed part of each statement's pg query config, by SQL text: its name (hashing the text on every
 * request showed in the list's profile), the text, array rows.
 */
const statementConfigs = new Map<string, StatementConfig>();

interface StatementConfig {
  name: string;
  text: string;
  rowMode: "array";
}

function statementConfig(sql: string): StatementConfig {
  let c = statementConfigs.get(sql);
  if (c === undefined) {
    if (statementConfigs.size >= 4 * MAX_PREPARED_PER_CONNECTION) statementConfigs.clear();
    c = { name: `page_${createHash("sha1").update(sql).digest("base64url")}`, text: sql, rowMode: "array" };
    statementConfigs.set(sql, c);
  }
  return c;
}

interface PgConnection {
  query(config: {
    name?: string;
    text: string;
    values: unknown[];
    rowMode?: "array";
  }): Promise<{ rows: unknown[][]; fields: { name: string }[] }>;
  connection: { parsedStatements: Record<string, string> };
}

export interface PgClient {
  transacting?: boolean;
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(c: PgConnection): Promise<void>;
  emit(event: "query", q: { sql: string; bindings: readonly unknown[]; method: string }): void;
}

/**
 * Runs a page's statement as a named prepared statement on a pooled connection: Postgres parses and plans
 * each list's shape once per connection instead of on every request. In a transaction (the caller's `trx`
 * or a query `.transacting(trx)`) it runs as knex runs it, on the transaction's connection.
 */
export async function runPrepared(q: Knex.QueryBuilder): Promise<Carried> {
  // The query's own client: a transaction's when the query belongs to one.
  const client = (q as unknown as { client: PgClient }).client;
  if (client.transacting) return fromObjects((await q) as Record<string, unknown>[]);
  const { sql, bindings } = q.toSQL().toNative();
  return runStatement(client, sql, bindings as unknown[]);
}

/** Runs `sql` as a named prepared statement on one of `client`'s pooled connections (see runPrepared). */
export async function runStatement(client: PgClient, sql: string, values: unknown[]): Promise<Carried> {
  // As knex would: listeners on "query" (statement counts in tests, logging) see this statement too.
  client.emit("query", { sql, bindings: values, method: "select" });
  const conn = await client.acquireConnection();
  try {
    const parsed = conn.connection.parsedStatements;
    const fixed = statementConfig(sql);
    const { name } = fixed;
    const run = async (named: boolean) => {
      // pg copies a query's own properties on every call (about 1 µs each); the fixed ones ride on the
      // prototype, which that copy keeps.
      const config = Object.create(named ? fixed : { text: sql, rowMode: "array" });
      config.values = values;
      const r = await conn.query(config);
      return fromArrays(r.fields, r.rows);
    };
    if (!(name in parsed) && Object.keys(parsed).length >= MAX_PREPARED_PER_CONNECTION) return await run(false);
    const preparedBefore = name in parsed;
    try {
      return await run(true);
    } catch (err) {
      // A table's columns changed under a statement prepared before (a migration while this process
      // runs): Postgres refuses the old plan for good on this connection. Prepare it afresh. Any other
      // 0A000, or one while preparing, is the query's own error.
      if (sqlState(err) !== FEATURE_NOT_SUPPORTED || !preparedBefore) throw err;
      delete parsed[name];
      await conn.query({ text: `DEALLOCATE "${name}"`, values: [] });
      return await run(true);
    }
  } finally {
    await client.releaseConnection(conn);
  }
}
