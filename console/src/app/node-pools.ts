// Node pools with grants (super_admins; docs/dev/node-pools.md): a cluster's nodes by label, granted to
// organizations, projects or single users.
import type { BodyOf } from "../api/client.ts";
import type { Project } from "../api/openapi.gen.ts";
import { api } from "./context.ts";
import { loadProjects } from "./organizations.ts";

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

/**
 * The account with exactly this email, as the administrator typed it (the users list filters by prefix; a
 * longer email that starts with it is someone else). Undefined when there is none.
 */
export async function findUserByEmail(email: string, signal?: AbortSignal) {
  const wanted = email.trim().toLowerCase();
  const r = await api.call("listUsers", { query: { email: wanted, page: 1, size: 20 } }, { signal });
  return r.data.find((u) => u.email === wanted);
}

/**
 * The projects of each organization a project-grant form has picked, by organization id (the first page of
 * each, as every organization's project picker shows).
 */
export async function loadProjectsByOrganization(
  organizationIds: readonly string[],
  signal?: AbortSignal,
): Promise<Map<string, Project[]>> {
  const ids = [...new Set(organizationIds.filter((id) => id !== ""))];
  const lists = await Promise.all(ids.map((id) => loadProjects(id, signal)));
  return new Map(ids.map((id, i) => [id, lists[i]?.data ?? []]));
}
