// One page of a knex query and the query's total, in one round trip: the page's own SELECT carries
// `count(*) OVER ()`, which Postgres computes over every row the query yields (after WHERE, joins and
// GROUP BY, before LIMIT/OFFSET). Every SQL list pages through here: `paginate` in http/paging.ts for the
// route layer, and the db/operations list functions that answer {rows, total}.
//
// The trap: a page past the end has no row to carry the total, so only then a second query counts (a
// first page with no row needs none: the total is 0).
// Costs to know: the window buffers the whole result before the first row is returned, where a plain
// count(*) could stream; for our lists (a caller's scope, tens to thousands of rows) that is cheaper than
// a second round trip. A list of millions should page by key instead.
import type { Knex } from "knex";

/** Column name of the window total; removed from every row before it is returned. */
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
}

/** knex keeps a query's clauses in `_statements` (not typed, stable since knex 0.x). */
function statementsOf(query: Knex.QueryBuilder): Statement[] {
  return (query as unknown as { _statements: Statement[] })._statements;
}

/**
 * A window total is exact unless DISTINCT or UNION sits at the top level (the window is computed before
 * DISTINCT removes rows, and belongs to one branch of a UNION); those queries count separately.
 */
function windowCountIsExact(statements: Statement[]): boolean {
  return !statements.some((s) => s.grouping === "union" || (s.grouping === "columns" && (s.distinct || s.distinctOn)));
}

/** The total by a separate count over the query wrapped as a subquery (right for any query shape). */
export async function countRows(db: Knex | Knex.Transaction, query: Knex.QueryBuilder): Promise<number> {
  const row = (await db
    .count<{ total: string | number }[]>({ total: "*" })
    .from(query.clone().clearOrder().as("paged"))
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
  if (!windowCountIsExact(statements)) {
    const total = await countRows(db, query);
    const rows =
      total > window.offset ? ((await query.clone().limit(window.limit).offset(window.offset)) as Row[]) : [];
    return { rows, total };
  }
  const q = query.clone();
  // A query without a select list means `select *`; adding a column would otherwise replace the `*`.
  if (!statements.some((s) => s.grouping === "columns")) q.select("*");
  q.select(db.raw("count(*) OVER () AS ??", [TOTAL]))
    .limit(window.limit)
    .offset(window.offset);
  const raw = (await q) as (Row & { [TOTAL]: string | number })[];
  const first = raw[0];
  if (first === undefined) return { rows: [], total: window.offset === 0 ? 0 : await countRows(db, query) };
  const total = Number(first[TOTAL]);
  const rows = raw.map(({ [TOTAL]: _, ...row }) => row as unknown as Row);
  return { rows, total };
}
