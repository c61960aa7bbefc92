// Node pools with grants (super_admins; docs/dev/node-pools.md): a cluster's nodes by label, granted to
// organizations or projects.
import type { BodyOf } from "../api/client.ts";
import { api } from "./context.ts";

export function loadNodePools(clusterId: string, signal?: AbortSignal) {
  return api.call("listClusterNodePools", { params: { clusterId }, query: { size: 100 } }, { signal });
}

export function createNodePool(clusterId: string, body: BodyOf<"createClusterNodePool">) {
  return api.call("createClusterNodePool", { params: { clusterId }, body });
}

export function deleteNodePool(clusterId: string, poolId: string) {
  return api.call("deleteClusterNodePool", { params: { clusterId, poolId } });
}

export function grantNodePool(clusterId: string, poolId: string, body: BodyOf<"grantClusterNodePool">) {
  return api.call("grantClusterNodePool", { params: { clusterId, poolId }, body });
}

export function revokeNodePoolGrant(clusterId: string, poolId: string, grantId: string) {
  return api.call("revokeClusterNodePoolGrant", { params: { clusterId, poolId, grantId } });
}
