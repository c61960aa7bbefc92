import type { Knex } from "knex";
import type { ClusterNodeRow } from "./types.ts";

export async function findNode(db: Knex, clusterId: string, name: string): Promise<ClusterNodeRow | undefined> {
  return (await db<ClusterNodeRow>("cluster_nodes").where({ cluster_id: clusterId, name }).first()) as
    | ClusterNodeRow
    | undefined;
}

/** Optimistic update after a cordon/uncordon; the operator's next snapshot confirms or corrects it. */
export async function setNodeSchedulable(
  db: Knex,
  clusterId: string,
  name: string,
  schedulable: boolean,
): Promise<ClusterNodeRow | undefined> {
  const [row] = await db<ClusterNodeRow>("cluster_nodes")
    .where({ cluster_id: clusterId, name })
    .update({ schedulable, updated_at: db.fn.now() as unknown as Date })
    .returning("*");
  return row as ClusterNodeRow | undefined;
}

/** Removes a node and its devices (after it was deleted on its cluster). */
export async function deleteNode(db: Knex, clusterId: string, name: string): Promise<boolean> {
  return (await db("cluster_nodes").where({ cluster_id: clusterId, name }).delete()) > 0;
}
