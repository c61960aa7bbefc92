// GET /api/v1/sessions/:sessionId/usage: what a session is using, from the operator's usage samples.
import { type ConnectPortsOf, connectDepsOf } from "../../domain/connect/adapters.ts";
import { sessionUsage } from "../../domain/sessions/usage.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { SessionParams } from "../connect/schemas.ts";
import { presentUsage } from "./presenter.ts";
import { SessionUsage, UsageQuery } from "./schemas.ts";

export function usageRoutes(portsOf: ConnectPortsOf = connectDepsOf): RouteDef[] {
  const getUsage = defineRoute({
    method: "get",
    path: "/api/v1/sessions/:sessionId/usage",
    operationId: "getSessionUsage",
    tags: ["sessions"],
    summary: "Live usage of a session: the latest figures and a short series",
    description:
      "Built from the usage samples the session's cluster operator reports (POST /internal/v1/usage; a sample id is stored once, so a resent batch counts once). `latest` is the newest sample, `series` the latest `points` samples oldest first, `totals` every sample of the session. GPU utilisation and memory are null when the cluster does not expose them. 404 for a session the caller may not see.",
    auth: "user",
    params: SessionParams,
    query: UsageQuery,
    responses: { 200: SessionUsage },
    handler: async ({ deps, principal, params, query }) => {
      const session = await portsOf(deps).sessions.forUser(principal, params.sessionId);
      const { samples, totals } = await sessionUsage(deps, session.id, query.points);
      return { status: 200, body: presentUsage(session.id, samples, totals) };
    },
  });
  return [getUsage];
}

export const routes: RouteDef[] = usageRoutes();
