// A session's idle rule as it stands now (docs/dev/idle-and-limits.md).

import { idleStateOf } from "../../domain/reclaim/idleState.ts";
import { defineRoute } from "../../http/route.ts";
import { SessionParams } from "../sessions/schemas.ts";
import { presentIdle } from "./presenter.ts";
import { SessionIdle } from "./schemas.ts";

export const sessionIdleRoute = defineRoute({
  method: "get",
  path: "/api/v1/sessions/:sessionId/idle",
  operationId: "getSessionIdle",
  tags: ["sessions"],
  summary: "Where the session's idle rule and time limit stand now",
  description:
    "The idle timeout and maximum running time the session runs under, its three activity signals (GPU, user traffic, notebook) and, while a signal is unknown, which one keeps the idle rule suspended (the session then never pauses for idleness; the time limit still applies). Whoever sees the session; 404 for others.",
  auth: "user",
  params: SessionParams,
  responses: { 200: SessionIdle },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentIdle(await idleStateOf(deps, principal, params.sessionId)),
  }),
});

export const routes = [sessionIdleRoute];
