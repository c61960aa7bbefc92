import type { Knex } from "knex";

export interface BuildClusterRow {
  cluster_id: string;
  marked_by: string;
  marked_at: Date;
}

export async function listBuildClusters(db: Knex): Promise<BuildClusterRow[]> {
  return (await db("build_clusters").orderBy("marked_at")) as BuildClusterRow[];
}

export async function markBuildCluster(db: Knex, row: BuildClusterRow): Promise<void> {
  await db("build_clusters").insert(row).onConflict("cluster_id").ignore();
}

export async function unmarkBuildCluster(db: Knex, clusterId: string): Promise<boolean> {
  return (await db("build_clusters").where({ cluster_id: clusterId }).delete()) > 0;
}
