// Routes every deployment answers, declared like any other: liveness and the machine-readable description.
// The API browser (/api/v1/docs) and /metrics are not JSON: see docs.ts and app.ts.
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { Health, OpenApiDocument } from "./schemas.ts";

export const healthz = defineRoute({
  method: "get",
  path: "/healthz",
  operationId: "getHealth",
  tags: ["system"],
  summary: "Liveness probe (outside the versioned prefix)",
  description: "Answers as long as the process serves HTTP; it does not check dependencies.",
  auth: "public",
  selfContained: true,
  responses: { 200: Health },
  handler: async (_) => ({ status: 200, body: { status: "ok" } }),
});

/** The description of `contract()`: every route, this one included, so the list is given late. */
export function openApiRoute(contract: () => readonly RouteDef[]): RouteDef {
  let cached: Record<string, unknown> | undefined;
  return defineRoute({
    method: "get",
    path: "/api/v1/openapi.json",
    operationId: "getOpenApi",
    tags: ["system"],
    summary: "This API's OpenAPI 3.1 description (the same as api/openapi.json in the repository)",
    auth: "public",
    selfContained: true,
    responses: { 200: OpenApiDocument },
    handler: async (_) => {
      // Built at the first request: the document generator is loaded only by those who ask.
      if (!cached) {
        const { buildOpenApiDocument } = await import("../../http/openapi.ts");
        cached = buildOpenApiDocument(contract()) as unknown as Record<string, unknown>;
      }
      return { status: 200, body: cached };
    },
  });
}

/** The system routes, given the whole contract (for the description). */
export function systemRoutes(contract: () => readonly RouteDef[]): RouteDef[] {
  return [healthz, openApiRoute(contract)];
}
