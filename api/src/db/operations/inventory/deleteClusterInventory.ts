import type { Knex } from "knex";

/** Drops every node and device of the cluster (deregistration). */
export async function deleteClusterInventory(db: Knex, clusterId: string): Promise<{ nodes: number; devices: number }> {
  const devices = await db("gpu_devices").where({ cluster_id: clusterId }).delete();
  const nodes = await db("cluster_nodes").where({ cluster_id: clusterId }).delete();
  return { nodes, devices };
}
