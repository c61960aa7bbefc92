// One page of a knex query and the query's total, in one round trip: the page's own SELECT carries
// the total as an uncorrelated scalar subquery, `(SELECT count(*) FROM (<the query>) AS counted)`, which
// Postgres runs once per statement (an InitPlan), over the same snapshot as the page. Every SQL list
// pages through here: `paginate` in http/paging.ts for the route layer, and the db/operations list
// functions that answer {rows, total}.
//
// Why not `count(*) OVER ()` (what this did first): a window makes Postgres compute every row of the
// query, with every selected column, and sort them all before LIMIT can cut; the subquery leaves the page
// itself a plain ORDER BY ... LIMIT, which an index on the order columns answers by reading only the
// page's rows, while the count reads no more than it must (an index-only scan where one fits). On the
// users list (201 users, with its order index and only the presented columns) Postgres' CPU per request
// fell from about 900 µs to about 320 µs (bench/src/api-list.ts).
//
// The page's statement runs as a named prepared statement (outside transactions): Postgres then parses
// and plans each list's shape once per pooled connection. On the users list that took Postgres' CPU per
// request from about 270 µs to about 125 µs, level with the baseline's single point read.
//
// The trap: a page past the end has no row to carry the total, so only then a second query counts (a
// first page with no row needs none: the total is 0). A UNION at the top level is counted apart (the
// column would belong to one branch only).
import { createHash } from "node:crypto";
import type { Knex } from "knex";
import { FEATURE_NOT_SUPPORTED, sqlState } from "./sqlstate.ts";

/** Column name of the total; removed from every row before it is returned. */
const TOTAL = "__page_total";

export interface PageWindow {
  limit: number;
  offset: number;
}

export interface PageRows<Row> {
  rows: Row[];
  total: number;
}

interface Statement {
  grouping: string;
  distinct?: boolean;
  distinctOn?: boolean;
  value?: unknown;
  /** Set on aggregates (`aggregate`: .count(), .max()) and GROUP BY entries (`groupByBasic`, `groupByRaw`). */
  type?: string;
}

/** knex keeps a query's clauses in `_statements` (not typed, stable since knex 0.x). */
function statementsOf(query: Knex.QueryBuilder): Statement[] {
  return (query as unknown as { _statements: Statement[] })._statements;
}

/**
 * The total can ride on the page's rows unless a UNION sits at the top level (the extra column would
 * belong to one branch); such a query counts separately. DISTINCT is fine: the subquery counts the
 * distinct rows, and a column equal on every row changes no row's distinctness.
 */
function totalRidesOnRows(statements: Statement[]): boolean {
  return !statements.some((s) => s.grouping === "union");
}

/**
 * The query as the count's subquery: no ORDER BY, and no select list when it is only plain column names
 * (they cannot change how many rows there are, and knex compiling them a second time showed in the list's
 * profile). DISTINCT, UNION, raw expressions (a set-returning function multiplies rows) and subqueries keep it.
 */
function counted(db: Knex | Knex.Transaction, query: Knex.QueryBuilder): Knex.QueryBuilder {
  const q = query.clone().clearOrder();
  const statements = statementsOf(q);
  // A UNION deduplicates on the columns, so they stay too.
  if (statements.some((s) => s.grouping === "union")) return q;
  // A raw GROUP BY may name select-list positions (`GROUP BY 1`).
  if (statements.some((s) => s.grouping === "group" && s.type !== "groupByBasic")) return q;
  const columns = statements.filter((s) => s.grouping === "columns");
  const plain = columns.every(
    (s) =>
      s.type === undefined &&
      !s.distinct &&
      !s.distinctOn &&
      Array.isArray(s.value) &&
      s.value.every((c) => typeof c === "string" && !/[ (]/.test(c)),
  );
  return columns.length > 0 && plain ? q.clearSelect().select(db.raw("1")) : q;
}

/** The total by a separate count over the query wrapped as a subquery (right for any query shape). */
export async function countRows(db: Knex | Knex.Transaction, query: Knex.QueryBuilder): Promise<number> {
  const row = (await db
    .count<{ total: string | number }[]>({ total: "*" })
    .from(counted(db, query).as("paged"))
    .first()) as { total: string | number } | undefined;
  return Number(row?.total ?? 0);
}

/**
 * Runs `query` (give it an ORDER BY: paging an unordered query is not stable) as one page and answers
 * the rows with the query's total.
 */
export async function selectPage<Row>(
  db: Knex | Knex.Transaction,
  query: Knex.QueryBuilder,
  window: PageWindow,
): Promise<PageRows<Row>> {
  const statements = statementsOf(query);
  if (!totalRidesOnRows(statements)) {
    const total = await countRows(db, query);
    const rows =
      total > window.offset ? ((await query.clone().limit(window.limit).offset(window.offset)) as Row[]) : [];
    return { rows, total };
  }
  const q = query.clone();
  // A query without a select list means `select *`; adding a column would otherwise replace the `*`.
  if (!statements.some((s) => s.grouping === "columns")) q.select("*");
  // Names inside the subquery resolve to its own FROM first, so a clone of the whole query counts itself.
  q.select(db.raw("(SELECT count(*) FROM ? AS counted) AS ??", [counted(db, query), TOTAL]))
    .limit(window.limit)
    .offset(window.offset);
  const raw = (await runPrepared(q)) as (Row & { [TOTAL]: string | number })[];
  const first = raw[0];
  if (first === undefined) return { rows: [], total: window.offset === 0 ? 0 : await countRows(db, query) };
  const total = Number(first[TOTAL]);
  for (const row of raw) delete (row as Partial<typeof row>)[TOTAL];
  return { rows: raw as Row[], total };
}

/** Named statements a pooled connection may keep; past it, queries go unnamed (IN lists vary in length). */
const MAX_PREPARED_PER_CONNECTION = 256;
/** Statement names by SQL text (hashing the text on every request showed in the list's profile). */
const names = new Map<string, string>();

function statementName(sql: string): string {
  let name = names.get(sql);
  if (name === undefined) {
    if (names.size >= 4 * MAX_PREPARED_PER_CONNECTION) names.clear();
    name = `page_${createHash("sha1").update(sql).digest("base64url")}`;
    names.set(sql, name);
  }
  return name;
}

interface PgConnection {
  query(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
  connection: { parsedStatements: Record<string, string> };
}

interface PgClient {
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
async function runPrepared(q: Knex.QueryBuilder): Promise<unknown[]> {
  // The query's own client: a transaction's when the query belongs to one.
  const client = (q as unknown as { client: PgClient }).client;
  if (client.transacting) return (await q) as unknown[];
  const { sql, bindings } = q.toSQL().toNative();
  const values = bindings as unknown[];
  // As knex would: listeners on "query" (statement counts in tests, logging) see this statement too.
  client.emit("query", { sql, bindings, method: "select" });
  const conn = await client.acquireConnection();
  try {
    const parsed = conn.connection.parsedStatements;
    const name = statementName(sql);
    if (!(name in parsed) && Object.keys(parsed).length >= MAX_PREPARED_PER_CONNECTION)
      return (await conn.query({ text: sql, values })).rows;
    const preparedBefore = name in parsed;
    try {
      return (await conn.query({ name, text: sql, values })).rows;
    } catch (err) {
      // A table's columns changed under a statement prepared before (a migration while this process
      // runs): Postgres refuses the old plan for good on this connection. Prepare it afresh. Any other
      // 0A000, or one while preparing, is the query's own error.
      if (sqlState(err) !== FEATURE_NOT_SUPPORTED || !preparedBefore) throw err;
      delete parsed[name];
      await conn.query({ text: `DEALLOCATE "${name}"`, values: [] });
      return (await conn.query({ name, text: sql, values })).rows;
    }
  } finally {
    await client.releaseConnection(conn);
  }
}
