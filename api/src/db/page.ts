// One page of a knex query and the query's total, in one round trip: the page's own SELECT carries
// the total as an uncorrelated scalar subquery, `(SELECT count(*) FROM (<the query>) AS counted)`, which
// Postgres runs once per statement (an InitPlan), over the same snapshot as the page. Every SQL list
// pages through here: `paginate` in db/paging.ts for the route layer, and the db/operations list
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
  const q = pageOfQuery(db, query, statements).limit(window.limit).offset(window.offset);
  return withTotal<Row>(await runPrepared(q), window, () => countRows(db, query));
}

/** The query with the total as one more column (without its window). */
function pageOfQuery(
  db: Knex | Knex.Transaction,
  query: Knex.QueryBuilder,
  statements: Statement[],
): Knex.QueryBuilder {
  const q = query.clone();
  // A query without a select list means `select *`; adding a column would otherwise replace the `*`.
  if (!statements.some((s) => s.grouping === "columns")) q.select("*");
  // Names inside the subquery resolve to its own FROM first, so a clone of the whole query counts itself.
  return q.select(db.raw("(SELECT count(*) FROM ? AS counted) AS ??", [counted(db, query), TOTAL]));
}

/** A page statement's rows without the total's column, and the total the rows carry (undefined: no row). */
interface Carried {
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

/** The page; only past the end, where no row carries the total, is it counted apart. */
async function withTotal<Row>(
  carried: Carried,
  window: PageWindow,
  count: () => Promise<number>,
): Promise<PageRows<Row>> {
  if (carried.total !== undefined) return { rows: carried.rows as Row[], total: carried.total };
  return { rows: [], total: window.offset === 0 ? 0 : await count() };
}

// ---- Page statements compiled once per shape ------------------------------------------------------
//
// Building a list's knex query and compiling it to SQL cost about 75 µs of the users list's ~470 µs per
// request (bench/src/api-list.ts --profile): knex's compiler, the clones above, lodash. The SQL text depends
// only on which parameters are present (and how long the IN lists are), so `pageQuery` compiles it once per
// such shape, from the list's own builder given stand-in values, and remembers where each parameter's
// value goes among the bindings. A later request with the same shape only fills in its values.
// What it is worth, measured against the same API without it (bench/src/page-cache.ts):
// docs/adr/0008-page-statements-compiled-once-per-shape.md.
//
// What a builder must keep to (checked when a shape is compiled, by compiling once more from the real
// values: the statement and its bindings must come out the same; breaking a rule throws there):
// - Every value that varies between requests comes from its parameters, used as given: a value computed
//   from a parameter inside the builder (`${p.prefix}%`) is computed by the caller and passed instead,
//   and no Date is made inside the builder (it would be frozen into the statement).
// - Parameters are values (bindings), never identifiers or raw SQL text.
// - Branches may test a parameter only for being present (truthy), and an array for its length; the
//   shape tells a falsy value (undefined, null, "", 0, false) by its exact value, and those are compiled
//   as they are.

/** A list's parameters: scalars, and arrays for IN lists (their length is part of the shape). */
export type PageParams = Record<
  string,
  string | number | boolean | Date | null | undefined | readonly (string | number)[]
>;

/** Where one binding of a compiled page statement comes from. */
type BindingSource =
  | { kind: "param"; key: string; index: number | undefined }
  | { kind: "constant"; value: unknown }
  | { kind: "limit" }
  | { kind: "offset" };

interface PageStatement {
  sql: string;
  sources: BindingSource[];
}

/** Shapes kept per list; past it (IN lists of ever new lengths) a request compiles as selectPage does. */
const MAX_SHAPES = 64;
/** Stand-ins for the window, found among the bindings by value; no list binds such numbers itself. */
const LIMIT_MARK = 2_147_480_011;
const OFFSET_MARK = 2_147_480_013;
/** Prefix of a parameter's stand-in: a NUL never occurs in a real binding of ours. */
const STAND_IN = "\u0000berth-param:";

/** The shape of a list's parameters: which are present, each falsy value exactly, each array's length. */
function shapeOf(params: PageParams): string {
  // Keys in the order given: a caller's literal always gives them alike, and another order only costs
  // one more compiled shape, never a wrong one.
  let key = "";
  for (const k in params) {
    const v = params[k];
    if (v === undefined) continue;
    key += Array.isArray(v) ? `${k}[${v.length}];` : v ? `${k};` : `${k}=${typeof v}:${String(v)};`;
  }
  return key;
}

/** The parameters with each present value replaced by a stand-in string, and where each stand-in came from. */
function standIns(params: PageParams): { values: PageParams; sources: Map<unknown, BindingSource> } {
  const values: PageParams = {};
  const sources = new Map<unknown, BindingSource>();
  for (const [key, v] of Object.entries(params)) {
    if (Array.isArray(v)) {
      const arr = v.map((_, i) => `${STAND_IN}${key}:${i}`);
      for (const [index, s] of arr.entries()) sources.set(s, { kind: "param", key, index });
      // The whole array may be one binding too (`= ANY(?)`).
      sources.set(arr, { kind: "param", key, index: undefined });
      values[key] = arr;
    } else if (v) {
      const s = `${STAND_IN}${key}`;
      sources.set(s, { kind: "param", key, index: undefined });
      values[key] = s;
    } else {
      values[key] = v;
    }
  }
  return { values, sources };
}

function holdsStandIn(v: unknown): boolean {
  return (typeof v === "string" && v.includes(STAND_IN)) || (Array.isArray(v) && v.some(holdsStandIn));
}

/** The page statement of one shape, or undefined when the query counts apart (a top-level UNION). */
function compileShape<P extends PageParams>(
  db: Knex,
  build: (db: Knex | Knex.Transaction, p: P) => Knex.QueryBuilder,
  params: P,
  list: string,
): PageStatement | undefined {
  const { values, sources } = standIns(params);
  const query = build(db, values as P);
  const statements = statementsOf(query);
  if (!totalRidesOnRows(statements)) return undefined;
  const q = pageOfQuery(db, query, statements).limit(LIMIT_MARK).offset(OFFSET_MARK);
  const { sql, bindings } = q.toSQL().toNative();
  if (sql.includes(STAND_IN)) throw new Error(`page query ${list}: a parameter was written into the SQL text`);
  let limits = 0;
  let offsets = 0;
  const out = (bindings as unknown[]).map((b): BindingSource => {
    const source = sources.get(b);
    if (source) return source;
    if (b === LIMIT_MARK) {
      limits += 1;
      return { kind: "limit" };
    }
    if (b === OFFSET_MARK) {
      offsets += 1;
      return { kind: "offset" };
    }
    if (holdsStandIn(b)) throw new Error(`page query ${list}: a binding was computed from a parameter in the builder`);
    if (b instanceof Date) throw new Error(`page query ${list}: the builder made a Date of its own`);
    return { kind: "constant", value: b };
  });
  if (limits !== 1 || offsets !== 1) throw new Error(`page query ${list}: the window's bindings were not found`);
  const stmt = { sql, sources: out };
  // The rules knex cannot show broken with stand-ins (a parameter tested beyond being present, or one knex
  // reads itself, as orderBy reads a direction): the same query from the real values must be this one.
  const realQuery = build(db, params);
  const real = pageOfQuery(db, realQuery, statementsOf(realQuery))
    .limit(LIMIT_MARK)
    .offset(OFFSET_MARK)
    .toSQL()
    .toNative();
  const expected = bindingsOf(stmt, params, { limit: LIMIT_MARK, offset: OFFSET_MARK });
  if (
    real.sql !== sql ||
    real.bindings.length !== expected.length ||
    real.bindings.some((b, i) => !sameBinding(b, expected[i]))
  )
    throw new Error(
      `page query ${list}: the builder reads a parameter as more than a value (the query differs with real values)`,
    );
  return stmt;
}

/** Equal bindings: the same value, or arrays of equal values (a builder may make a constant array per call). */
function sameBinding(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameBinding(x, b[i]));
}

function bindingsOf(stmt: PageStatement, params: PageParams, window: PageWindow): unknown[] {
  const out: unknown[] = new Array(stmt.sources.length);
  for (const [i, s] of stmt.sources.entries()) {
    if (s.kind === "param") {
      const v = params[s.key];
      out[i] = s.index === undefined ? v : (v as readonly unknown[])[s.index];
    } else if (s.kind === "constant") out[i] = s.value;
    else out[i] = s.kind === "limit" ? window.limit : window.offset;
  }
  return out;
}

/**
 * A list's page function: `build` makes the list's query (with its ORDER BY) from `params`; the answer
 * is selectPage's, from a statement compiled once per shape of the parameters (see above). In a
 * transaction, or for a shape that counts apart, it runs as selectPage.
 */
export function pageQuery<Row, P extends PageParams>(
  list: string,
  build: (db: Knex | Knex.Transaction, p: P) => Knex.QueryBuilder,
): (db: Knex | Knex.Transaction, params: P, window: PageWindow) => Promise<PageRows<Row>> {
  const shapes = new Map<string, PageStatement | undefined>();
  return async (db, params, window) => {
    if ((db as Knex.Transaction).isTransaction) return selectPage<Row>(db, build(db, params), window);
    const key = shapeOf(params);
    let stmt = shapes.get(key);
    if (stmt === undefined && !shapes.has(key)) {
      stmt = compileShape(db, build, params, list);
      if (shapes.size < MAX_SHAPES) shapes.set(key, stmt);
    }
    if (stmt === undefined) return selectPage<Row>(db, build(db, params), window);
    const client = (db as unknown as { client: PgClient }).client;
    const carried = await runStatement(client, stmt.sql, bindingsOf(stmt, params, window));
    return withTotal<Row>(carried, window, () => countRows(db, build(db, params)));
  };
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
async function runPrepared(q: Knex.QueryBuilder): Promise<Carried> {
  // The query's own client: a transaction's when the query belongs to one.
  const client = (q as unknown as { client: PgClient }).client;
  if (client.transacting) return fromObjects((await q) as Record<string, unknown>[]);
  const { sql, bindings } = q.toSQL().toNative();
  return runStatement(client, sql, bindings as unknown[]);
}

/** Runs `sql` as a named prepared statement on one of `client`'s pooled connections (see runPrepared). */
async function runStatement(client: PgClient, sql: string, values: unknown[]): Promise<Carried> {
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
