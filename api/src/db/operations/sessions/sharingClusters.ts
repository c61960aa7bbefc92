import type { Knex } from "knex";

/** Registered clusters with a node of this GPU model that runs a GPU sharing layer (slices may go there). */
export async function sharingClusters(db: Knex, gpuModel: string): Promise<string[]> {
  const rows = (await db("cluster_nodes as n")
    .join("clusters as c", "c.id", "n.cluster_id")
    .whereNull("c.deregistered_at")
    .where("n.gpu_model", gpuModel)
    .whereNotNull("n.gpu_sharing")
    .distinct("n.cluster_id")
    .orderBy("n.cluster_id")) as { cluster_id: string }[];
  return rows.map((r) => r.cluster_id);
}
