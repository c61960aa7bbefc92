// Who is calling the internal plane: an operator, known by its RS256 token (docs/dev/internal-api.md).
//
// 401 `unauthenticated`: no token, not ours (a user token, another key, issuer or audience), or no longer
//   the cluster's current token (rotation revoked it).
// 401 `token_expired`: ours and current in every respect but time.
// 403 `forbidden`: the token is valid but its cluster is deregistered or unknown.
import type { Context } from "koa";
import { findClusterById } from "../db/operations/clusters/findClusterById.ts";
import type { Deps } from "../deps.ts";
import { clustersOf } from "../domain/clusters/runtime.ts";
import { Forbidden, Unauthorized } from "../errors.ts";

export interface OperatorPrincipal {
  clusterId: string;
  /** The token's id (jti). */
  tokenId: string;
  tokenExpiresAt: Date;
}

export function bearerToken(ctx: Context): string | undefined {
  return /^Bearer[ ]+([^\s]+)\s*$/i.exec(ctx.get("Authorization"))?.[1];
}

export async function authenticateOperator(deps: Deps, ctx: Context): Promise<OperatorPrincipal> {
  const token = bearerToken(ctx);
  if (!token) throw new Unauthorized("an operator token is required (Authorization: Bearer <token>)");
  const claims = await clustersOf(deps).tokens.verify(token);
  const row = await findClusterById(deps.db, claims.clusterId);
  if (!row || row.deregistered_at)
    throw new Forbidden(`cluster ${claims.clusterId} is not registered`, { cluster_id: claims.clusterId });
  if (row.operator_token_jti !== claims.jti) {
    throw new Unauthorized("this operator token was replaced by a newer one (rotation); install the current token");
  }
  return { clusterId: claims.clusterId, tokenId: claims.jti, tokenExpiresAt: claims.expiresAt };
}

/** Every report names its cluster; a report for another cluster than the token's is refused whole. */
export function assertOwnCluster(operator: OperatorPrincipal, clusterId: string): void {
  if (clusterId !== operator.clusterId) {
    throw new Forbidden("this operator token may report only for its own cluster; nothing was written", {
      token_cluster_id: operator.clusterId,
      cluster_id: clusterId,
    });
  }
}
