import { findClusterById } from "../../db/operations/clusters/findClusterById.ts";
import { updateClusterSessionDomain } from "../../db/operations/clusters/updateCluster.ts";
import type { Deps } from "../../deps.ts";
import { NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { requireSuperAdmin } from "./authorize.ts";
import { clustersOf } from "./runtime.ts";
import { type ClusterView, getClusterView } from "./view.ts";

/** PATCH: only `session_domain` changes after registration (the name and credential do not). */
export async function updateCluster(
  deps: Deps,
  principal: Principal,
  clusterId: string,
  input: { session_domain?: string },
): Promise<ClusterView> {
  requireSuperAdmin(principal, "change clusters");
  const row = await findClusterById(deps.db, clusterId);
  if (!row || row.deregistered_at) throw new NotFound("cluster", clusterId);
  if (input.session_domain !== undefined && input.session_domain !== row.session_domain) {
    // The resource first: it is what gateways and connect links read; the row follows.
    await clustersOf(deps).store.patchSessionDomain(clusterId, input.session_domain);
    await updateClusterSessionDomain(deps.db, clusterId, input.session_domain);
  }
  return getClusterView(deps, clusterId);
}
