import type { Knex } from "knex";
import type { ClusterNodeRow, GpuDeviceRow, InventoryNode } from "./types.ts";

const CHUNK = 500;

/**
 * Makes the cluster's stored inventory equal to the snapshot: nodes missing from it are removed (their
 * devices with them), the others upserted, devices replaced. Run it in a transaction that holds the
 * cluster's row lock (callers also decide whether the snapshot is newer than the stored one).
 */
export async function replaceClusterInventory(
  tx: Knex.Transaction,
  clusterId: string,
  observedAt: Date,
  nodes: InventoryNode[],
): Promise<{ accepted: number; removed: number }> {
  const names = nodes.map((n) => n.name);
  const removed = await tx<ClusterNodeRow>("cluster_nodes")
    .where({ cluster_id: clusterId })
    .whereNotIn("name", names)
    .delete();
  await tx<GpuDeviceRow>("gpu_devices").where({ cluster_id: clusterId }).delete();
  for (let i = 0; i < nodes.length; i += CHUNK) {
    const rows = nodes.slice(i, i + CHUNK).map((n) => ({
      cluster_id: clusterId,
      name: n.name,
      gpu_model: n.gpu_model,
      gpu_count: n.gpu_count,
      gpu_allocatable: n.gpu_allocatable,
      gpu_in_use: n.gpu_in_use,
      labels: JSON.stringify(n.labels),
      schedulable: n.schedulable,
      ready: n.ready,
      gpu_sharing: n.gpu_sharing ?? null,
      mig: n.mig ? JSON.stringify(n.mig) : null,
      observed_at: observedAt,
      updated_at: tx.fn.now(),
    }));
    await tx("cluster_nodes")
      .insert(rows)
      .onConflict(["cluster_id", "name"])
      .merge([
        "gpu_model",
        "gpu_count",
        "gpu_allocatable",
        "gpu_in_use",
        "labels",
        "schedulable",
        "ready",
        "gpu_sharing",
        "mig",
        "observed_at",
        "updated_at",
      ]);
  }
  const devices = nodes.flatMap((n) =>
    n.devices.map((d) => ({
      cluster_id: clusterId,
      node_name: n.name,
      index: d.index,
      model: d.model ?? n.gpu_model,
      uuid: d.uuid ?? null,
      memory_mib: d.memory_mib ?? null,
      cores: d.cores ?? null,
      split: d.split ?? null,
      healthy: d.healthy ?? null,
      memory_used_mib: d.memory_used_mib ?? null,
      cores_used: d.cores_used ?? null,
      vgpus_used: d.vgpus_used ?? null,
    })),
  );
  for (let i = 0; i < devices.length; i += CHUNK) await tx("gpu_devices").insert(devices.slice(i, i + CHUNK));
  await tx("clusters")
    .where({ id: clusterId })
    .update({ inventory_observed_at: observedAt, last_report_at: tx.fn.now() });
  return { accepted: nodes.length, removed };
}
