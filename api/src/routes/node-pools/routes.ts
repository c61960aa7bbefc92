// Node pools with grants (docs/dev/node-pools.md), under their cluster: a pool is a selector over one
// cluster's nodes. `/node-pools` (routes/nodes) is a different thing, the inventory's totals per cluster and
// GPU model; these are administrators' reservations.
import { z } from "zod";
import { Page, Paged, pageOf } from "../../db/paging.ts";
import {
  createNodePool,
  deleteNodePool,
  getNodePool,
  grantNodePool,
  listNodePools,
  revokeNodePoolGrant,
  updateNodePool,
} from "../../domain/nodePools/nodePools.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentNodePool } from "./presenter.ts";
import {
  ClusterNodePoolsParams,
  CreateNodePoolBody,
  GrantNodePoolBody,
  LabelledNodePool,
  NodePoolGrantParams,
  NodePoolParams,
  RevokeResult,
  UpdateNodePoolBody,
} from "./schemas.ts";

const TAGS = ["nodes"];
const BASE = "/api/v1/clusters/:clusterId/node-pools";

export const listClusterNodePoolsRoute = defineRoute({
  method: "get",
  path: BASE,
  operationId: "listClusterNodePools",
  tags: TAGS,
  summary: "A cluster's node pools with their grants (super_admin's scope; others get none)",
  auth: "user",
  params: ClusterNodePoolsParams,
  query: Page,
  responses: { 200: Paged(LabelledNodePool) },
  handler: async ({ deps, principal, params, query }) => ({
    status: 200,
    body: pageOf(await listNodePools(deps, principal, params.clusterId), query, presentNodePool),
  }),
});

export const createClusterNodePoolRoute = defineRoute({
  method: "post",
  path: BASE,
  operationId: "createClusterNodePool",
  tags: TAGS,
  summary: "Group a cluster's nodes into a pool by one label requirement (super_admin)",
  description:
    "A pool without grants is closed to every session until granted. 400 `node_selector_invalid` for a selector that is not one label requirement; 409 `node_pool_overlap` when it would share nodes with another pool (same label with a common value, or a node reported with both labels); 404 for an unknown cluster.",
  auth: "user",
  params: ClusterNodePoolsParams,
  body: CreateNodePoolBody,
  audit: "node_pool.create",
  errors: ["node_selector_invalid", "node_pool_overlap", "already_exists"],
  responses: { 201: LabelledNodePool },
  handler: async ({ deps, principal, params, body, audit }) => {
    const v = await createNodePool(deps, principal, params.clusterId, body);
    audit.target("node_pool", v.pool.id);
    audit.detail("selector", body.selector);
    return { status: 201, body: presentNodePool(v) };
  },
});

export const getClusterNodePoolRoute = defineRoute({
  method: "get",
  path: `${BASE}/:poolId`,
  operationId: "getClusterNodePool",
  tags: TAGS,
  summary: "A node pool with its grants and nodes (super_admin)",
  auth: "user",
  params: NodePoolParams,
  responses: { 200: LabelledNodePool },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentNodePool(await getNodePool(deps, principal, params.clusterId, params.poolId)),
  }),
});

export const updateClusterNodePoolRoute = defineRoute({
  method: "patch",
  path: `${BASE}/:poolId`,
  operationId: "updateClusterNodePool",
  tags: TAGS,
  summary: "Rename a node pool or change its selector (super_admin)",
  description: "The same checks as creation. Running sessions are not moved; placement follows at its next pass.",
  auth: "user",
  params: NodePoolParams,
  body: UpdateNodePoolBody,
  audit: "node_pool.update",
  errors: ["node_selector_invalid", "node_pool_overlap", "already_exists"],
  responses: { 200: LabelledNodePool },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("node_pool", params.poolId);
    const { before, after } = await updateNodePool(deps, principal, params.clusterId, params.poolId, body);
    audit.change(presentNodePool(before), presentNodePool(after));
    return { status: 200, body: presentNodePool(after) };
  },
});

export const deleteClusterNodePoolRoute = defineRoute({
  method: "delete",
  path: `${BASE}/:poolId`,
  operationId: "deleteClusterNodePool",
  tags: TAGS,
  summary: "Delete a node pool: its nodes are open to every session again (super_admin)",
  auth: "user",
  params: NodePoolParams,
  audit: "node_pool.delete",
  responses: { 204: z.null() },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("node_pool", params.poolId);
    await deleteNodePool(deps, principal, params.clusterId, params.poolId);
    return { status: 204, body: null };
  },
});

export const grantClusterNodePoolRoute = defineRoute({
  method: "post",
  path: `${BASE}/:poolId/grants`,
  operationId: "grantClusterNodePool",
  tags: TAGS,
  summary: "Grant a node pool to an organization, a project or one user (super_admin)",
  description:
    "Exactly one of organization_id, project_id and user_id (else 400 `validation_failed`). Granting again is a no-op. 422 `grantee_not_found` for an organization, project or user that does not exist. A user's grant is dropped with their account and counts only while they belong to an organization.",
  auth: "user",
  params: NodePoolParams,
  body: GrantNodePoolBody,
  audit: "node_pool.grant",
  errors: ["grantee_not_found"],
  responses: { 201: LabelledNodePool },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("node_pool", params.poolId);
    audit.detail("grantee", body.organization_id ?? body.project_id ?? body.user_id);
    return {
      status: 201,
      body: presentNodePool(await grantNodePool(deps, principal, params.clusterId, params.poolId, body)),
    };
  },
});

export const revokeClusterNodePoolGrantRoute = defineRoute({
  method: "delete",
  path: `${BASE}/:poolId/grants/:grantId`,
  operationId: "revokeClusterNodePoolGrant",
  tags: TAGS,
  summary: "Remove a grant: new sessions of the grantee are no longer placed on the pool (super_admin)",
  description:
    "Running sessions of the grantee on the pool's nodes keep running; each owner gets a `session.node_pool_revoked` notification. `warned_sessions` lists them.",
  auth: "user",
  params: NodePoolGrantParams,
  audit: "node_pool.revoke",
  responses: { 200: RevokeResult },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("node_pool", params.poolId);
    audit.detail("grant", params.grantId);
    const { view, warned } = await revokeNodePoolGrant(
      deps,
      principal,
      params.clusterId,
      params.poolId,
      params.grantId,
    );
    return { status: 200, body: { ...presentNodePool(view), warned_sessions: warned } };
  },
});

export const routes: RouteDef[] = [
  listClusterNodePoolsRoute,
  createClusterNodePoolRoute,
  getClusterNodePoolRoute,
  updateClusterNodePoolRoute,
  deleteClusterNodePoolRoute,
  grantClusterNodePoolRoute,
  revokeClusterNodePoolGrantRoute,
];
