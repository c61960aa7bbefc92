// Deregistration: refused while anything lives on the cluster; otherwise the Cluster resource, its
// credential Secret and its inventory go, and the Postgres row stays (deregistered_at) because session
// history and the ledger name the cluster id. Every step is idempotent, so a DELETE that failed half-way
// is finished by repeating it.

import { findClusterById } from "../../db/operations/clusters/findClusterById.ts";
import { markClusterDeregistered } from "../../db/operations/clusters/updateCluster.ts";
import { deleteClusterInventory } from "../../db/operations/inventory/deleteClusterInventory.ts";
import type { Deps } from "../../deps.ts";
import { DomainError, NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { requireSuperAdmin } from "./authorize.ts";
import { clustersOf } from "./runtime.ts";
import { credentialSecretName } from "./store.ts";

export interface DeregistrationResult {
  id: string;
  deregisteredAt: Date;
  removed: { nodes: number; gpuDevices: number };
}

export async function deregisterCluster(
  deps: Deps,
  principal: Principal,
  clusterId: string,
): Promise<DeregistrationResult> {
  requireSuperAdmin(principal, "deregister clusters");
  const rt = clustersOf(deps);
  const row = await findClusterById(deps.db, clusterId);
  if (!row || row.deregistered_at) throw new NotFound("cluster", clusterId);
  if (await rt.hasLiveWork(clusterId)) {
    throw new DomainError(
      "cluster_in_use",
      "the cluster still has live sessions or GPU allocations; terminate or pause them first",
      { cluster_id: clusterId },
    );
  }
  const resource = await rt.store.getCluster(clusterId);
  await rt.store.deleteCluster(clusterId);
  await rt.store.deleteCredentialSecret(
    resource?.spec.credentialSecretRef ?? { namespace: rt.store.namespace, name: credentialSecretName(clusterId) },
  );
  rt.clients.forget(clusterId);
  const at = deps.clock.now();
  const removed = await deps.db.transaction(async (tx) => {
    const locked = await findClusterById(tx, clusterId, { forUpdate: true });
    if (!locked || locked.deregistered_at) throw new NotFound("cluster", clusterId);
    await markClusterDeregistered(tx, clusterId, principal.userId, at);
    return deleteClusterInventory(tx, clusterId);
  });
  deps.log.info({ kind: "Cluster", id: clusterId, ...removed }, "cluster deregistered");
  return { id: clusterId, deregisteredAt: at, removed: { nodes: removed.nodes, gpuDevices: removed.devices } };
}
