// GET /api/v1/sessions/:sessionId/connect: the session's three connect links, on its own cluster's host.
import { type ConnectPortsOf, connectDepsOf } from "../../domain/connect/adapters.ts";
import { issueConnectLinks } from "../../domain/connect/issueConnectLinks.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentConnectLinks } from "./presenter.ts";
import { ConnectLinks, SessionParams } from "./schemas.ts";

export function connectRoutes(portsOf: ConnectPortsOf = connectDepsOf): RouteDef[] {
  const getConnectLinks = defineRoute({
    method: "get",
    path: "/api/v1/sessions/:sessionId/connect",
    operationId: "getSessionConnectLinks",
    tags: ["sessions"],
    summary: "Fresh connect links (notebook, terminal, code editor) for a running session",
    description: [
      "Each call mints three single-use connect tokens (256 random bits each, stored only as a hash, valid for 60 seconds) bound to the session, the caller and the session's cluster, and answers the links on that cluster's `session_domain`: `https://{session_domain}/proxy/{cr}/lab`, `/terminal` and `/code/`, each with `svc_cnx=<token>`.",
      "Opening a link: the cluster's gateway redeems the token once with the control plane, sets a short-lived cookie for `/proxy/{cr}/` and redirects to the same address without the token. Ask for new links every time a user clicks Open: a used or expired link is refused.",
      "Refused: 404 `not_found` for a session the caller may not use; 409 `conflict` with `details.reason` = `session_not_running` and `details.phase` when it is not Running.",
    ].join("\n\n"),
    auth: "user",
    params: SessionParams,
    // Who opened whose session, and when: a GET, but one that hands out access.
    audit: "session.connect",
    responses: { 200: ConnectLinks },
    handler: async ({ deps, principal, params, audit }) => {
      audit.target("session", params.sessionId);
      const links = await issueConnectLinks(portsOf(deps), principal, params.sessionId);
      // The answer holds live tokens: no cache anywhere may keep it.
      return { status: 200, body: presentConnectLinks(links), headers: { "Cache-Control": "no-store" } };
    },
  });
  return [getConnectLinks];
}

export const routes: RouteDef[] = connectRoutes();
