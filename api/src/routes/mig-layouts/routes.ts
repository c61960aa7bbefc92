// MIG layouts (docs/dev/gpu-sharing.md), under their cluster: an administrator marks nodes, by one label
// requirement, as MIG-partitioned so; sessions are then offered the layout's profiles those nodes advertise.
import { z } from "zod";
import { Page, Paged, pageOf } from "../../db/paging.ts";
import { createMigLayout, deleteMigLayout, listMigLayouts } from "../../domain/mig/layouts.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentMigLayout } from "./presenter.ts";
import { ClusterMigLayoutsParams, CreateMigLayoutBody, MigLayout, MigLayoutParams } from "./schemas.ts";

const TAGS = ["nodes"];
const BASE = "/api/v1/clusters/:clusterId/mig-layouts";

export const listClusterMigLayoutsRoute = defineRoute({
  method: "get",
  path: BASE,
  operationId: "listClusterMigLayouts",
  tags: TAGS,
  summary: "A cluster's MIG layouts with the nodes each marks (super_admin's scope; others get none)",
  auth: "user",
  params: ClusterMigLayoutsParams,
  query: Page,
  responses: { 200: Paged(MigLayout) },
  handler: async ({ deps, principal, params, query }) => ({
    status: 200,
    body: pageOf(await listMigLayouts(deps, principal, params.clusterId), query, presentMigLayout),
  }),
});

export const createClusterMigLayoutRoute = defineRoute({
  method: "post",
  path: BASE,
  operationId: "createClusterMigLayout",
  tags: TAGS,
  summary:
    "Mark a cluster's nodes of one model, by one label requirement, as MIG-partitioned with a layout (super_admin)",
  description:
    "Sessions are offered the layout's profiles on those nodes, as far as the nodes advertise them (`nvidia.com/mig-<profile>`). 400 `mig_profile_unknown`, `mig_profile_not_for_model`, `mig_layout_overfilled`, `node_selector_invalid`; 409 `mig_layout_overlap` when it would mark a node another layout of the model marks (same label with a common value, or a node reported with both labels); 404 for an unknown cluster.",
  auth: "user",
  params: ClusterMigLayoutsParams,
  body: CreateMigLayoutBody,
  audit: "mig_layout.create",
  errors: [
    "mig_profile_unknown",
    "mig_profile_not_for_model",
    "mig_layout_overfilled",
    "node_selector_invalid",
    "mig_layout_overlap",
  ],
  responses: { 201: MigLayout },
  handler: async ({ deps, principal, params, body, audit }) => {
    const v = await createMigLayout(deps, principal, params.clusterId, body);
    audit.target("mig_layout", v.layout.id);
    audit.detail("selector", body.selector);
    return { status: 201, body: presentMigLayout(v) };
  },
});

export const deleteClusterMigLayoutRoute = defineRoute({
  method: "delete",
  path: `${BASE}/:layoutId`,
  operationId: "deleteClusterMigLayout",
  tags: TAGS,
  summary: "Remove a MIG layout: its profiles are no longer offered there; running sessions keep running (super_admin)",
  auth: "user",
  params: MigLayoutParams,
  audit: "mig_layout.delete",
  responses: { 204: z.null() },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("mig_layout", params.layoutId);
    await deleteMigLayout(deps, principal, params.clusterId, params.layoutId);
    return { status: 204, body: null };
  },
});

export const routes: RouteDef[] = [
  listClusterMigLayoutsRoute,
  createClusterMigLayoutRoute,
  deleteClusterMigLayoutRoute,
];
