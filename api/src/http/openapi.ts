// The OpenAPI 3.1 document, generated from the route declarations with zod-openapi (never by hand).
// api/openapi.json is this document, committed; a test fails when they differ.
import { STATUS_CODES } from "node:http";
import { z } from "zod";
import {
  createDocument,
  type oas31,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponsesObject,
} from "zod-openapi";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../db/paging.ts";
import { ERROR_CODES, type ErrorCode } from "../errors.ts";
import { ErrorEnvelope, REQUEST_ID_HEADER } from "./envelope.ts";
import { IDEMPOTENCY_HEADER, IdempotencyKeyHeader, REPLAYED_HEADER } from "./idempotency.ts";
import type { RouteDef } from "./route.ts";

/** /api/v1/projects/:projectId -> /api/v1/projects/{projectId} */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
}

function errorCodeTable(): string {
  const rows = Object.entries(ERROR_CODES).map(([code, e]) => `| \`${code}\` | ${e.status} | ${e.description} |`);
  return ["| Code | Status | Meaning |", "|---|---|---|", ...rows].join("\n");
}

const DESCRIPTION = `Berth's public API. Everything the console does goes through it.

- **Authentication**: sign in with \`POST /api/v1/auth/login\` and send the token as \`Authorization: Bearer <token>\`. Tokens are short-lived; there is no refresh, sign in again. An account with \`must_change_password\` may call only the password endpoints until it changes its password (403 \`password_change_required\`).
- **Money**: every credit amount is a **string of integer minor units** (for example \`"150000"\`), never a JSON number, so no client loses precision.
- **Lists** take \`page\` (1-based, default 1) and \`size\` (default ${DEFAULT_PAGE_SIZE}, at most ${MAX_PAGE_SIZE}) and answer \`{data, pagination: {page, size, total}}\`. Asking for more than your role may see returns what it may see, not 403.
- **Idempotency**: creating writes take an \`${IDEMPOTENCY_HEADER}\` header. A repeat with the same key and request returns the original status and body (header \`${REPLAYED_HEADER}: true\`) and creates nothing; the same key with a different request is 422 \`idempotency_key_reused\`; a repeat while the first is still running is 409 \`idempotency_request_in_flight\`. Keys are scoped to the caller and route and remembered for 24 hours.
- **Errors** all use one envelope, \`{error: {code, message, details, request_id, timestamp}}\`; every response carries the request id in \`${REQUEST_ID_HEADER}\`. Codes are stable:

${errorCodeTable()}`;

function errorResponse(codes: ErrorCode[]) {
  return {
    description: codes.map((c) => `\`${c}\``).join(", "),
    content: { "application/json": { schema: ErrorEnvelope } },
  };
}

/** The error answers the layer itself may give for a route, by status. */
function layerErrors(route: RouteDef): Record<number, ErrorCode[]> {
  const e: Record<number, ErrorCode[]> = { 500: ["internal", "kubernetes_refused"] };
  const b: ErrorCode[] = [];
  if (route.params || route.query || route.body || route.idempotent) b.push("validation_failed");
  if (route.body) b.push("malformed_json");
  if (b.length > 0) e[400] = b;
  if (route.params) e[404] = ["not_found"];
  if (route.body) {
    e[413] = ["payload_too_large"];
    e[415] = ["unsupported_media_type"];
  }
  if (route.auth !== "public") {
    e[401] = ["unauthenticated", "token_expired"];
    e[403] = route.auth === "user" ? ["forbidden", "password_change_required"] : ["forbidden"];
  }
  if (route.idempotent) {
    e[409] = ["idempotency_request_in_flight"];
    e[422] = ["idempotency_key_reused"];
  }
  // Authentication alone reads Postgres (a principal not cached); a database or cluster that cannot be
  // reached is 503 (http/envelope.ts, db/unreachable.ts), on every route but the self-contained ones.
  if (!route.selfContained) e[503] = ["unavailable"];
  for (const code of route.errors ?? []) {
    const status = ERROR_CODES[code].status;
    e[status] = [...new Set([...(e[status] ?? []), code])];
  }
  return e;
}

function operation(route: RouteDef): ZodOpenApiOperationObject {
  const responses: ZodOpenApiResponsesObject = {};
  for (const [statusText, schema] of Object.entries(route.responses as Record<string, z.ZodType>)) {
    const status = Number(statusText);
    const headers =
      route.idempotent && status < 300
        ? z.object({
            [REPLAYED_HEADER]: z
              .literal("true")
              .optional()
              .meta({ description: "Present when this is a replay of an earlier answer to the same Idempotency-Key." }),
          })
        : undefined;
    responses[statusText as `${1 | 2 | 3 | 4 | 5}${string}`] =
      status === 204
        ? { description: STATUS_CODES[status] ?? "No Content" }
        : {
            description: STATUS_CODES[status] ?? String(status),
            content:
              route.produces && status < 300
                ? Object.fromEntries(Object.entries(route.produces).map(([type, s]) => [type, { schema: s }]))
                : { "application/json": { schema } },
            ...(headers ? { headers } : {}),
          };
  }
  for (const [status, codes] of Object.entries(layerErrors(route))) {
    const key = status as `${1 | 2 | 3 | 4 | 5}${string}`;
    if (!responses[key]) responses[key] = errorResponse(codes);
  }
  const requestParams: NonNullable<ZodOpenApiOperationObject["requestParams"]> = {};
  if (route.params) requestParams.path = route.params as z.ZodObject;
  if (route.query) requestParams.query = route.query as z.ZodObject;
  if (route.idempotent) requestParams.header = z.object({ [IDEMPOTENCY_HEADER]: IdempotencyKeyHeader.optional() });
  return {
    operationId: route.operationId,
    tags: route.tags,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    security: route.auth === "public" ? [] : [{ bearer: [] }],
    ...(Object.keys(requestParams).length > 0 ? { requestParams } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: !route.body.safeParse(undefined).success,
            content: { "application/json": { schema: route.body } },
          },
        }
      : {}),
    responses,
  };
}

/** The names of a zod object schema's fields, or none when the schema is not an object. */
function fieldsOf(schema: unknown): Set<string> {
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape;
  return new Set(shape && typeof shape === "object" ? Object.keys(shape) : []);
}

/**
 * OpenAPI links from each create to what acts on the thing it made: a POST answering 201 at a collection
 * links to every operation under `<collection>/{param}`, the parameter taken from the answer's field of
 * that name (`id` for `…Id`, else the parameter's name as is or in snake case, else `name`), the collection's own parameters from
 * the request. Derived from the routes, so a new route under a collection is linked without a change here;
 * stateful fuzzing (api/src/routes/openapiFuzz.test.ts) follows them: create, then read, act, delete.
 */
export function createLinks(routes: readonly RouteDef[]): Map<RouteDef, Record<string, oas31.LinkObject>> {
  const links = new Map<RouteDef, Record<string, oas31.LinkObject>>();
  for (const create of routes) {
    const answer = (create.responses as Record<string, unknown>)["201"];
    if (create.method !== "post" || !answer) continue;
    const fields = fieldsOf(answer);
    const own: Record<string, oas31.LinkObject> = {};
    for (const target of routes) {
      if (target === create || !target.path.startsWith(`${create.path}/:`)) continue;
      const param = target.path.slice(create.path.length + 2).split("/")[0] ?? "";
      const snake = param.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
      const field = [param.endsWith("Id") ? "id" : undefined, param, snake, "name"].find((f) => f && fields.has(f));
      if (!field) continue;
      const parameters: Record<string, string> = { [param]: `$response.body#/${field}` };
      for (const [, p] of create.path.matchAll(/:([A-Za-z0-9_]+)/g)) if (p) parameters[p] = `$request.path.${p}`;
      own[target.operationId] = { operationId: target.operationId, parameters };
    }
    if (Object.keys(own).length > 0) links.set(create, own);
  }
  return links;
}

export function buildOpenApiDocument(routes: readonly RouteDef[]): oas31.OpenAPIObject {
  const paths: ZodOpenApiPathsObject = {};
  const visible = routes
    .filter((r) => !r.hidden)
    .toSorted((a, b) => (a.path === b.path ? a.method.localeCompare(b.method) : a.path.localeCompare(b.path)));
  const links = createLinks(visible);
  for (const route of visible) {
    const p = openApiPath(route.path);
    const op = operation(route);
    const own = links.get(route);
    const created = op.responses["201"];
    if (own && created && !("$ref" in created)) created.links = own;
    paths[p] = { ...(paths[p] ?? {}), [route.method]: op };
  }
  const tags = [...new Set(visible.flatMap((r) => r.tags))].sort().map((name) => ({ name }));
  return createDocument({
    openapi: "3.1.0",
    "x-generated":
      "Generated from the route declarations by `npm run generate -w api` (api/src/generateOpenapi.ts). Do not edit.",
    info: { title: "Berth API", version: "1.0.0", description: DESCRIPTION },
    tags,
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "Access token from POST /api/v1/auth/login.",
        },
      },
      schemas: { ErrorEnvelope },
    },
  });
}

/** The document as committed: stable key order from the generator, two-space indent, final newline. */
export function renderOpenApi(routes: readonly RouteDef[]): string {
  return `${JSON.stringify(buildOpenApiDocument(routes), null, 2)}\n`;
}
