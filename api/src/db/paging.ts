// Paging for every list: query `page` (1-based, default 1) and `size` (default 20, 1..100); answers
// {data, pagination: {page, size, total}}. A page past the end is an empty `data` with the real total.
import type { Knex } from "knex";
import { z } from "zod";
import { selectPage } from "./page.ts";

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** Query schema of a list; extend it with the list's own filters: `query: Page.extend({ scope })`. */
export const Page = z.object({
  page: z.coerce.number().int().min(1).default(1).meta({ description: "1-based page number.", example: 1 }),
  size: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .default(DEFAULT_PAGE_SIZE)
    .meta({ description: `Items per page, 1 to ${MAX_PAGE_SIZE}.`, example: DEFAULT_PAGE_SIZE }),
});
export type Page = z.infer<typeof Page>;

export const Pagination = z
  .object({ page: z.number().int(), size: z.number().int(), total: z.number().int() })
  .meta({ id: "Pagination" });
export type Pagination = z.infer<typeof Pagination>;

/** Response schema of a list of `item`. */
export function Paged<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), pagination: Pagination });
}
export interface PagedBody<T> {
  data: T[];
  pagination: Pagination;
}

/**
 * Runs a knex query as one page in one round trip (db/page.ts: the total rides on the page's rows as a
 * scalar count subquery; a page past the end counts separately). Give the query an ORDER BY: paging an unordered
 * query is not stable.
 */
export async function paginate<Row, Out>(
  db: Knex | Knex.Transaction,
  query: Knex.QueryBuilder,
  page: Page,
  present: (row: Row) => Out,
): Promise<PagedBody<Out>> {
  const { rows, total } = await selectPage<Row>(db, query, { limit: page.size, offset: (page.page - 1) * page.size });
  return { data: rows.map(present), pagination: { page: page.page, size: page.size, total } };
}

/** One page of an in-memory list (for lists that do not come from Postgres, e.g. custom resources). */
export function pageOf<T, Out = T>(
  items: readonly T[],
  page: Page,
  present: (item: T) => Out = (x) => x as unknown as Out,
): PagedBody<Out> {
  const start = (page.page - 1) * page.size;
  return {
    data: items.slice(start, start + page.size).map(present),
    pagination: { page: page.page, size: page.size, total: items.length },
  };
}
