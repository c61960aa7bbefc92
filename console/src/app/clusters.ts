// GPU clusters and their nodes (super_admins): register, test, edit, deregister; cordon, drain, delete.
import type { BodyOf } from "../api/client.ts";
import type { NodeActionResult } from "../api/openapi.gen.ts";
import { api } from "./context.ts";

export function loadClusters(signal?: AbortSignal) {
  return api.call("listClusters", { query: { size: 100 } }, { signal });
}

export function loadCluster(clusterId: string, signal?: AbortSignal) {
  return api.call("getCluster", { params: { clusterId } }, { signal });
}

export function loadNodes(cluster: string, signal?: AbortSignal) {
  return api.call("listNodes", { query: { cluster, size: 100 } }, { signal });
}

export function registerCluster(body: BodyOf<"registerCluster">) {
  return api.call("registerCluster", { body });
}

export function testClusterConnection(clusterId: string) {
  return api.call("testClusterConnection", { params: { clusterId }, body: {} });
}

export function setSessionDomain(clusterId: string, domain: BodyOf<"updateCluster">["session_domain"]) {
  return api.call("updateCluster", { params: { clusterId }, body: { session_domain: domain } });
}

export function deregisterCluster(clusterId: string) {
  return api.call("deregisterCluster", { params: { clusterId } });
}

export function actOnNode(
  clusterId: string,
  nodeName: string,
  action: "cordon" | "uncordon" | "drain" | "delete",
  reason?: string,
): Promise<NodeActionResult> {
  const params = { clusterId, nodeName };
  const body = reason ? { reason } : {};
  return action === "cordon"
    ? api.call("cordonNode", { params, body })
    : action === "uncordon"
      ? api.call("uncordonNode", { params, body })
      : action === "drain"
        ? api.call("drainNode", { params, body })
        : api.call("deleteNode", { params });
}
