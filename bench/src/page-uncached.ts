// The page-cache bench's "without" side: `node --import ./page-uncached.ts api-list-server.ts api` runs the
// API with every import of db/page.ts answered by this module, whose pageQuery builds and compiles the
// list's knex query on every call and hands it to selectPage (what pageQuery does in a transaction).
// Everything else is db/page.ts' own, so both sides send the same named prepared statement.
// With BENCH_PAGE_HOOK=inert the hook is registered but sends nothing here: the bench's control side.
import { registerHooks } from "node:module";
import { type PageParams, type PageRows, type PageWindow, selectPage } from "@berth/api/db/page";
import type { Knex } from "knex";

export * from "@berth/api/db/page";

/** pageQuery without its statement-shape cache. */
export function pageQuery<Row, P extends PageParams>(
  _list: string,
  build: (db: Knex | Knex.Transaction, p: P) => Knex.QueryBuilder,
): (db: Knex | Knex.Transaction, params: P, window: PageWindow) => Promise<PageRows<Row>> {
  return (db, params, window) => selectPage<Row>(db, build(db, params), window);
}

const page = import.meta.resolve("@berth/api/db/page");
const self = import.meta.url;
const inert = process.env.BENCH_PAGE_HOOK === "inert";
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    return !inert && resolved.url === page && context.parentURL !== self ? { ...resolved, url: self } : resolved;
  },
});
