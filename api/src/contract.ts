// The API contract without Koa: every route declaration and the shared schemas. openapi.json and the
// console's types come from here.
import { allRoutes } from "./routes/index.ts";

export const contractRoutes = allRoutes;
export type { RouteDef, RouteSpec, HandlerResult } from "./http/route.ts";
export { ErrorEnvelope } from "./http/envelope.ts";
export { ERROR_CODES, type ErrorCode } from "./errors.ts";
export { Page, Paged, Pagination, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "./http/paging.ts";
