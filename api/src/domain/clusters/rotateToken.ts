// Operator tokens are issued at registration and on manual rotation. The cluster's row names the one
// token (jti) that is accepted: issuing a new one revokes the previous one at once.
import { toTimestamp } from "@berth/crds";
import { findClusterById } from "../../db/operations/clusters/findClusterById.ts";
import { setClusterOperatorToken } from "../../db/operations/clusters/updateCluster.ts";
import type { Deps } from "../../deps.ts";
import { NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { requireSuperAdmin } from "./authorize.ts";
import type { IssuedOperatorToken } from "./operatorToken.ts";
import { clustersOf } from "./runtime.ts";

/** Issues a token for the cluster, makes it the accepted one and records its metadata on the resource. */
export async function installOperatorToken(deps: Deps, clusterId: string): Promise<IssuedOperatorToken> {
  const rt = clustersOf(deps);
  const token = await rt.tokens.issue(clusterId);
  await setClusterOperatorToken(deps.db, clusterId, {
    jti: token.jti,
    issuedAt: token.issuedAt,
    expiresAt: token.expiresAt,
  });
  await rt.store.patchStatus(clusterId, {
    operatorToken: { kid: token.kid, issuedAt: toTimestamp(token.issuedAt), expiresAt: toTimestamp(token.expiresAt) },
  });
  return token;
}

export async function rotateOperatorToken(
  deps: Deps,
  principal: Principal,
  clusterId: string,
): Promise<IssuedOperatorToken> {
  requireSuperAdmin(principal, "rotate operator tokens");
  const row = await findClusterById(deps.db, clusterId);
  if (!row || row.deregistered_at) throw new NotFound("cluster", clusterId);
  const token = await installOperatorToken(deps, clusterId);
  deps.log.info(
    { kind: "Cluster", id: clusterId, kid: token.kid, expiresAt: token.expiresAt.toISOString() },
    "operator token rotated",
  );
  return token;
}
