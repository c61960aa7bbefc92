// Page statements compiled once per shape (pageQuery in page.ts).
//
// Building a list's knex query and compiling it to SQL cost about 75 µs of the users list's ~470 µs per
// request (bench/src/api-list.ts --profile): knex's compiler, the clones in pageSql.ts, lodash. The SQL
// text depends only on which parameters are present (and how long the IN lists are), so `pageQuery`
// compiles it once per such shape, from the list's own builder given stand-in values, and remembers where
// each parameter's value goes among the bindings. A later request with the same shape only fills in its
// values.
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
import type { Knex } from "knex";
import { pageOfQuery, statementsOf, totalRidesOnRows } from "./pageSql.ts";

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

export interface PageStatement {
  sql: string;
  sources: BindingSource[];
}

/** Shapes kept per list; past it (IN lists of ever new lengths) a request compiles as selectPage does. */
export const MAX_SHAPES = 64;
/** Stand-ins for the window, found among the bindings by value; no list binds such numbers itself. */
const LIMIT_MARK = 2_147_480_011;
const OFFSET_MARK = 2_147_480_013;
/** Prefix of a parameter's stand-in: a NUL never occurs in a real binding of ours. */
const STAND_IN = "\u0000berth-param:";

/** The shape of a list's parameters: which are present, each falsy value exactly, each array's length. */
export function shapeOf(params: PageParams): string {
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
export function compileShape<P extends PageParams>(
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

export function bindingsOf(
  stmt: PageStatement,
  params: PageParams,
  window: { limit: number; offset: number },
): unknown[] {
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
