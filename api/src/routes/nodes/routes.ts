// The inventory the operators report (nodes, GPU devices, pools) and the node actions the control plane
// carries out on a cluster with its credential. Nodes and devices are fleet internals: their list is
// super_admin's scope (anyone else gets an empty page, as Endpoints rule 1 says: the scope, not 403).
// Pools are aggregates and visible to everyone signed in.

import { Paged } from "../../db/paging.ts";
import { readGpuDevices, readNodePools, readNodes } from "../../domain/clusters/inventory.ts";
import { type NodeAction, runNodeAction } from "../../domain/clusters/nodeActions.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentGpuDevice, presentNode, presentNodeAction, presentNodePool } from "./presenter.ts";
import {
  GpuDevice,
  ListGpuDevicesQuery,
  ListNodePoolsQuery,
  ListNodesQuery,
  Node,
  NodeActionBody,
  NodeActionResult,
  NodeParams,
  NodePool,
} from "./schemas.ts";

export const listNodesRoute = defineRoute({
  method: "get",
  path: "/api/v1/nodes",
  operationId: "listNodes",
  tags: ["nodes"],
  summary: "GPU nodes of the fleet as their operators last reported them (super_admin's scope)",
  auth: "user",
  query: ListNodesQuery,
  responses: { 200: Paged(Node) },
  handler: async ({ deps, principal, query }) => {
    const { rows, total } = await readNodes(deps, principal, {
      ...(query.cluster ? { clusterId: query.cluster } : {}),
      limit: query.size,
      offset: (query.page - 1) * query.size,
    });
    return {
      status: 200,
      body: { data: rows.map(presentNode), pagination: { page: query.page, size: query.size, total } },
    };
  },
});

export const listGpuDevicesRoute = defineRoute({
  method: "get",
  path: "/api/v1/gpu-devices",
  operationId: "listGpuDevices",
  tags: ["nodes"],
  summary: "GPU cards of the fleet (super_admin's scope)",
  auth: "user",
  query: ListGpuDevicesQuery,
  responses: { 200: Paged(GpuDevice) },
  handler: async ({ deps, principal, query }) => {
    const { rows, total } = await readGpuDevices(deps, principal, {
      ...(query.cluster ? { clusterId: query.cluster } : {}),
      ...(query.node ? { nodeName: query.node } : {}),
      limit: query.size,
      offset: (query.page - 1) * query.size,
    });
    return {
      status: 200,
      body: { data: rows.map(presentGpuDevice), pagination: { page: query.page, size: query.size, total } },
    };
  },
});

export const listNodePoolsRoute = defineRoute({
  method: "get",
  path: "/api/v1/node-pools",
  operationId: "listNodePools",
  tags: ["nodes"],
  summary: "Nodes grouped by cluster and GPU model, with totals",
  auth: "user",
  query: ListNodePoolsQuery,
  responses: { 200: Paged(NodePool) },
  handler: async ({ deps, query }) => {
    const { rows, total } = await readNodePools(deps, {
      ...(query.cluster ? { clusterId: query.cluster } : {}),
      limit: query.size,
      offset: (query.page - 1) * query.size,
    });
    return {
      status: 200,
      body: { data: rows.map(presentNodePool), pagination: { page: query.page, size: query.size, total } },
    };
  },
});

function nodeActionRoute(action: Exclude<NodeAction, "delete">, summary: string, description: string) {
  return defineRoute({
    method: "post",
    path: `/api/v1/nodes/:clusterId/:nodeName/${action}`,
    operationId: `${action}Node`,
    tags: ["nodes"],
    summary,
    description,
    auth: "user",
    params: NodeParams,
    body: NodeActionBody,
    audit: `node.${action}`,
    responses: { 200: NodeActionResult },
    handler: async ({ deps, principal, params, body, audit }) => {
      audit.target("node", `${params.clusterId}/${params.nodeName}`);
      if (body?.reason) audit.detail("reason", body.reason);
      return {
        status: 200,
        body: presentNodeAction(
          await runNodeAction(deps, principal, params.clusterId, params.nodeName, action, body?.reason),
        ),
      };
    },
  });
}

const ON_CLUSTER =
  "Carried out on the node's cluster with its registered credential; 404 when the cluster or the node does not exist there, 503 when the cluster does not answer or refuses.";

export const cordonNodeRoute = nodeActionRoute(
  "cordon",
  "Cordon a node: no new sessions are placed on it (super_admin)",
  ON_CLUSTER,
);
export const uncordonNodeRoute = nodeActionRoute(
  "uncordon",
  "Uncordon a node (super_admin)",
  `A node Berth cordoned for hardware faults needs a reason (400 validation_failed without one); the reason is in the audit log. ${ON_CLUSTER}`,
);
export const drainNodeRoute = nodeActionRoute(
  "drain",
  "Drain a node: cordon it and evict Berth's session pods from it (super_admin)",
  `Evicts (Eviction API, so disruption budgets hold) every pod of the session namespace on the node; other namespaces' pods are not Berth's and stay. outcome is partial when an eviction was refused. ${ON_CLUSTER}`,
);

export const deleteNodeRoute = defineRoute({
  method: "delete",
  path: "/api/v1/nodes/:clusterId/:nodeName",
  operationId: "deleteNode",
  tags: ["nodes"],
  summary: "Delete a node object from its cluster (super_admin)",
  description: `Deletes the Node object (drain it first); its inventory row and GPU devices go with it. ${ON_CLUSTER}`,
  auth: "user",
  params: NodeParams,
  audit: "node.delete",
  responses: { 200: NodeActionResult },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("node", `${params.clusterId}/${params.nodeName}`);
    return {
      status: 200,
      body: presentNodeAction(await runNodeAction(deps, principal, params.clusterId, params.nodeName, "delete")),
    };
  },
});

export const routes: RouteDef[] = [
  listNodesRoute,
  listGpuDevicesRoute,
  listNodePoolsRoute,
  cordonNodeRoute,
  uncordonNodeRoute,
  drainNodeRoute,
  deleteNodeRoute,
];
