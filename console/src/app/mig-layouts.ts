// MIG layouts (super_admins; docs/dev/gpu-sharing.md): which of a cluster's nodes are MIG-partitioned, and
// into which instances per card.
import type { BodyOf } from "../api/client.ts";
import { api } from "./context.ts";

export function loadMigLayouts(clusterId: string, signal?: AbortSignal) {
  return api.call("listClusterMigLayouts", { params: { clusterId }, query: { size: 100 } }, { signal });
}

export function createMigLayout(clusterId: string, body: BodyOf<"createClusterMigLayout">) {
  return api.call("createClusterMigLayout", { params: { clusterId }, body });
}

export function deleteMigLayout(clusterId: string, layoutId: string) {
  return api.call("deleteClusterMigLayout", { params: { clusterId, layoutId } });
}
