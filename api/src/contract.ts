// The API contract without Koa: every route declaration and the shared schemas. openapi.json and the
// console's types come from here.
import { allRoutes } from "./routes/index.ts";

export const contractRoutes = allRoutes;
export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, Page, Paged, Pagination } from "./db/paging.ts";
export { ERROR_CODES, type ErrorCode } from "./errors.ts";
export { ErrorEnvelope } from "./http/envelope.ts";
export type { HandlerResult, RouteDef, RouteSpec } from "./http/route.ts";
