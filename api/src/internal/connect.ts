// GET /internal/connect/verify on the internal listener, called by each cluster's session gateway with
// that cluster's operator token. Two modes (docs/dev/connect.md):
//
//   redeem: ?cr={cr} and header X-Berth-Connect-Token: <svc_cnx>. Spends the token (exactly once across
//           all replicas) and answers the grant the gateway's cookie carries.
//   check:  ?cr={cr}&session={id}&user={id}. Is this grant still good? (cookie renewal; explaining why a
//           session's upstream is silent). Spends nothing.
//
// 200 {session_id, cr, cluster_id, user_id, phase}. Refusals carry details.reason: 403 forbidden
// (token_invalid, token_unknown, token_used, token_expired, other_session, other_cluster, session_moved,
// not_allowed), 409 conflict (session_not_running, with details.phase), 404 not_found (session_gone).
// The cluster is the operator token's, never the request's: another cluster's gateway cannot redeem.
import { type ConnectPortsOf, connectDepsOf } from "../domain/connect/adapters.ts";
import { checkConnectGrant } from "../domain/connect/checkConnectGrant.ts";
import { ConnectRefused } from "../domain/connect/errors.ts";
import { type ConnectGrant, verifyConnectToken } from "../domain/connect/verifyConnectToken.ts";
import { presentGrant } from "../routes/connect/presenter.ts";
import { VerifyQuery } from "../routes/connect/schemas.ts";
import { type AnyInternalRoute, defineInternalRoute } from "./route.ts";

export const CONNECT_TOKEN_HEADER = "X-Berth-Connect-Token";

export function connectInternalRoutes(portsOf: ConnectPortsOf = connectDepsOf): AnyInternalRoute[] {
  const verify = defineInternalRoute({
    method: "get",
    path: "/internal/connect/verify",
    auth: "operator",
    query: VerifyQuery,
    handler: async ({ deps, operator, query, ctx }) => {
      const ports = portsOf(deps);
      const token = ctx.get(CONNECT_TOKEN_HEADER);
      let grant: ConnectGrant;
      if (token) grant = await verifyConnectToken(ports, { clusterId: operator.clusterId, crName: query.cr, token });
      else if (query.session && query.user)
        grant = await checkConnectGrant(ports, {
          clusterId: operator.clusterId,
          crName: query.cr,
          sessionId: query.session,
          userId: query.user,
        });
      else
        throw new ConnectRefused(
          "token_invalid",
          `send the connect token in ${CONNECT_TOKEN_HEADER}, or session and user to check a grant`,
        );
      return { status: 200, body: presentGrant(grant), headers: { "Cache-Control": "no-store" } };
    },
  });
  return [verify];
}

export const internalRoutes: AnyInternalRoute[] = connectInternalRoutes();
