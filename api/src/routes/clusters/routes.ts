// Cluster registration and administration. Everyone signed in may list and read clusters (sessions can
// be pinned to one); only super_admins register, test, change, rotate tokens and deregister, and only
// they see probe checks and token metadata.

import { Paged } from "../../db/paging.ts";
import { deregisterCluster } from "../../domain/clusters/deregister.ts";
import { registerCluster } from "../../domain/clusters/register.ts";
import { rotateOperatorToken } from "../../domain/clusters/rotateToken.ts";
import { testClusterConnection } from "../../domain/clusters/testConnection.ts";
import { updateCluster } from "../../domain/clusters/update.ts";
import { getClusterView, listClusterViews } from "../../domain/clusters/view.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentCluster, presentConnectionTest, presentDeregistration, presentIssuedToken } from "./presenter.ts";
import {
  Cluster,
  ClusterParams,
  ConnectionTestBody,
  ConnectionTestResult,
  DeregistrationResult,
  IssuedOperatorToken,
  ListClustersQuery,
  RegisterClusterBody,
  RegisteredCluster,
  UpdateClusterBody,
} from "./schemas.ts";

const REFUSALS =
  "Refused with 422 and details.checks (every check's boolean): `cluster_unreachable` (no answer before the probe's deadline, about two minutes by default; also a refused connection or a certificate that does not verify), `cluster_credential_invalid` (the cluster answered 401), `cluster_credential_insufficient` (details.missing_permissions lists what the credential may not do), `gpu_runtime_class_missing`, `gpu_device_plugin_missing`. A registered cluster of the same name: 409 `already_exists`.";

export const registerClusterRoute = defineRoute({
  method: "post",
  path: "/api/v1/clusters",
  operationId: "registerCluster",
  tags: ["clusters"],
  summary: "Register a GPU cluster (super_admin); answers its operator token once",
  description: [
    "Probes the cluster with the given credential before accepting it: GET /version answers; the RuntimeClass `nvidia` exists with handler `nvidia`; the GPU device plugin is present (a DaemonSet in kube-system whose name contains `nvidia-device-plugin`, or any node with allocatable `nvidia.com/gpu` above zero); SelfSubjectAccessReviews allow every verb Berth uses there (nodes list/patch/delete; runtimeclasses get; persistentvolumes list/patch; in berth-sessions pods list, pods/log get, pods/eviction create, sessionmirrors.berth.dev get/create/patch/delete, persistentvolumeclaims get/delete; in kube-system daemonsets list).",
    REFUSALS,
    "Accepted: a new id `clu_…` (also when a name is registered again after deregistration), the credential kept in a Secret of the management cluster (never returned), and the operator token (RS256, 7 days), shown only in this answer. Not idempotent by key: the answer carries a secret that is stored nowhere; after a lost answer, rotate the token.",
  ].join("\n\n"),
  auth: "user",
  body: RegisterClusterBody,
  audit: "cluster.register",
  errors: [
    "conflict",
    "already_exists",
    "cluster_unreachable",
    "cluster_credential_invalid",
    "cluster_credential_insufficient",
    "gpu_runtime_class_missing",
    "gpu_device_plugin_missing",
  ],
  responses: { 201: RegisteredCluster },
  handler: async ({ deps, principal, body, audit }) => {
    const r = await registerCluster(deps, principal, body);
    audit.target("cluster", r.view.row.id);
    return {
      status: 201,
      body: { cluster: presentCluster(r.view, { admin: true }), operator_token: presentIssuedToken(r.token) },
    };
  },
});

export const listClustersRoute = defineRoute({
  method: "get",
  path: "/api/v1/clusters",
  operationId: "listClusters",
  tags: ["clusters"],
  summary: "List registered clusters",
  auth: "user",
  query: ListClustersQuery,
  responses: { 200: Paged(Cluster) },
  handler: async ({ deps, principal, query }) => {
    const admin = principal.isSuperAdmin;
    const { views, total } = await listClusterViews(deps, {
      page: query.page,
      size: query.size,
      includeDeregistered: admin && query.include_deregistered,
    });
    return {
      status: 200,
      body: {
        data: views.map((v) => presentCluster(v, { admin })),
        pagination: { page: query.page, size: query.size, total },
      },
    };
  },
});

export const getClusterRoute = defineRoute({
  method: "get",
  path: "/api/v1/clusters/:clusterId",
  operationId: "getCluster",
  tags: ["clusters"],
  summary: "A cluster (super_admins also see deregistered ones)",
  auth: "user",
  params: ClusterParams,
  responses: { 200: Cluster },
  handler: async ({ deps, principal, params }) => {
    const admin = principal.isSuperAdmin;
    const view = await getClusterView(deps, params.clusterId, { includeDeregistered: admin });
    return { status: 200, body: presentCluster(view, { admin }) };
  },
});

export const updateClusterRoute = defineRoute({
  method: "patch",
  path: "/api/v1/clusters/:clusterId",
  operationId: "updateCluster",
  tags: ["clusters"],
  summary: "Change a cluster's session_domain (super_admin)",
  auth: "user",
  params: ClusterParams,
  body: UpdateClusterBody,
  audit: "cluster.update",
  responses: { 200: Cluster },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("cluster", params.clusterId);
    const view = await updateCluster(deps, principal, params.clusterId, body);
    return { status: 200, body: presentCluster(view, { admin: true }) };
  },
});

export const deregisterClusterRoute = defineRoute({
  method: "delete",
  path: "/api/v1/clusters/:clusterId",
  operationId: "deregisterCluster",
  tags: ["clusters"],
  summary: "Deregister a cluster (super_admin)",
  description:
    "Refused with 409 `cluster_in_use` while live sessions or GPU allocations exist on the cluster. Otherwise the Cluster resource, its credential Secret, its nodes and GPU devices are dropped and its operator token stops working; the cluster's record stays (deregistered_at) for session history and the ledger.",
  auth: "user",
  params: ClusterParams,
  audit: "cluster.deregister",
  errors: ["cluster_in_use"],
  responses: { 200: DeregistrationResult },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("cluster", params.clusterId);
    return { status: 200, body: presentDeregistration(await deregisterCluster(deps, principal, params.clusterId)) };
  },
});

export const connectionTestRoute = defineRoute({
  method: "post",
  path: "/api/v1/clusters/:clusterId/connection-test",
  operationId: "testClusterConnection",
  tags: ["clusters"],
  summary: "Probe a registered cluster with its stored credential (super_admin)",
  description:
    "Runs the registration probe again and records it on the cluster. `status`: `connected` (every check true), `unreachable` (refused, TLS failure, or no answer before the deadline), `unauthorized` (the cluster answered 401 to the stored credential), `degraded` (reachable and authenticated, but a check is false: `message` and `missing_permissions` say which). The answer is 200 in every case: the test itself worked.",
  auth: "user",
  params: ClusterParams,
  body: ConnectionTestBody,
  audit: "cluster.connection_test",
  errors: [
    "cluster_unreachable",
    "cluster_credential_invalid",
    "cluster_credential_insufficient",
    "gpu_runtime_class_missing",
    "gpu_device_plugin_missing",
  ],
  responses: { 200: ConnectionTestResult },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("cluster", params.clusterId);
    return { status: 200, body: presentConnectionTest(await testClusterConnection(deps, principal, params.clusterId)) };
  },
});

export const rotateOperatorTokenRoute = defineRoute({
  method: "post",
  path: "/api/v1/clusters/:clusterId/operator-token",
  operationId: "rotateClusterOperatorToken",
  tags: ["clusters"],
  summary: "Issue a new operator token for a cluster (super_admin); the previous one stops working",
  description:
    "Manual rotation: the answer is the only place the new token appears. The previous token is refused (401) from now on; the operator re-reads its token file on every attempt, so replacing the file needs no restart.",
  auth: "user",
  params: ClusterParams,
  audit: "cluster.operator_token.rotate",
  responses: { 201: IssuedOperatorToken },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("cluster", params.clusterId);
    return { status: 201, body: presentIssuedToken(await rotateOperatorToken(deps, principal, params.clusterId)) };
  },
});

export const routes: RouteDef[] = [
  registerClusterRoute,
  listClustersRoute,
  getClusterRoute,
  updateClusterRoute,
  deregisterClusterRoute,
  connectionTestRoute,
  rotateOperatorTokenRoute,
];
