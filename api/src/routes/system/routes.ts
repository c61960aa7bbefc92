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

let cached: Record<string, unknown> | undefined;

export const getOpenApi = defineRoute({
  method: "get",
  path: "/api/v1/openapi.json",
  operationId: "getOpenApi",
  tags: ["system"],
  summary: "This API's OpenAPI 3.1 description (the same as api/openapi.json in the repository)",
  auth: "public",
  selfContained: true,
  responses: { 200: OpenApiDocument },
  handler: async (_) => {
    // Imported late: the contract lists this very route, so a static import would be circular.
    if (!cached) {
      const [{ contractRoutes }, { buildOpenApiDocument }] = await Promise.all([
        import("../../contract.ts"),
        import("../../http/openapi.ts"),
      ]);
      cached = buildOpenApiDocument(contractRoutes) as unknown as Record<string, unknown>;
    }
    return { status: 200, body: cached };
  },
});

export const routes: RouteDef[] = [healthz, getOpenApi];
