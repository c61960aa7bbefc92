// A page's SQL, built from the list's knex query (page.ts): the query with the total as one more column
// (an uncorrelated scalar subquery), and the count's subquery. Pure: nothing here runs a statement.
import type { Knex } from "knex";

/** Column name of the total; removed from every row before it is returned. */
export const TOTAL = "__page_total";

interface Statement {
  grouping: string;
  distinct?: boolean;
  distinctOn?: boolean;
  value?: unknown;
  /** Set on aggregates (`aggregate`: .count(), .max()) and GROUP BY entries (`groupByBasic`, `groupByRaw`). */
  type?: string;
}

/** knex keeps a query's clauses in `_statements` (not typed, stable since knex 0.x). */
export function statementsOf(query: Knex.QueryBuilder): Statement[] {
  return (query as unknown as { _statements: Statement[] })._statements;
}

/**
 * The total can ride on the page's rows unless a UNION sits at the top level (the extra column would
 * belong to one branch); such a query counts separately. DISTINCT is fine: the subquery counts the
 * distinct rows, and a column equal on every row changes no row's distinctness.
 */
export function totalRidesOnRows(statements: Statement[]): boolean {
  return !statements.some((s) => s.grouping === "union");
}

/**
 * The query as the count's subquery: no ORDER BY, and no select list when it is only plain column names
 * (they cannot change how many rows there are, and knex compiling them a second time showed in the list's
 * profile). DISTINCT, UNION, raw expressions (a set-returning function multiplies rows) and subqueries keep it.
 */
export function counted(db: Knex | Knex.Transaction, query: Knex.QueryBuilder): Knex.QueryBuilder {
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

/** The query with the total as one more column (without its window). */
export function pageOfQuery(
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
