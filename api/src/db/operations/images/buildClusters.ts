import type { Knex } from "knex";

export interface BuildClusterRow {
  cluster_id: string;
  marked_by: string;
  marked_at: Date;
  /** A Secret (kubernetes.io/dockerconfigjson) in the cluster's builds namespace that builds push with. */
  push_secret: string | null;
}

export async function listBuildClusters(db: Knex): Promise<BuildClusterRow[]> {
  return (await db("build_clusters").orderBy("marked_at")) as BuildClusterRow[];
}

export async function findBuildCluster(db: Knex, clusterId: string): Promise<BuildClusterRow | undefined> {
  return (await db("build_clusters").where({ cluster_id: clusterId }).first()) as BuildClusterRow | undefined;
}

export async function markBuildCluster(db: Knex, row: BuildClusterRow): Promise<void> {
  // Marking again changes the push Secret (and who marked it last).
  await db("build_clusters").insert(row).onConflict("cluster_id").merge();
}

export async function unmarkBuildCluster(db: Knex, clusterId: string): Promise<boolean> {
  return (await db("build_clusters").where({ cluster_id: clusterId }).delete()) > 0;
}
