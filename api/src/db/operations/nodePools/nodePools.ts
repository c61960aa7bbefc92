// Node pools and their grants (docs/dev/node-pools.md). One function per operation; the caller passes
// the transaction.
import type { Knex } from "knex";

export interface NodePoolRow {
  id: string;
  cluster_id: string;
  name: string;
  description: string;
  label_key: string;
  label_values: string[];
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface NodePoolGrantRow {
  id: string;
  pool_id: string;
  grantee_kind: "organization" | "project";
  grantee_id: string;
  created_by: string | null;
  created_at: Date;
}

export async function listNodePoolRows(db: Knex, clusterId?: string): Promise<NodePoolRow[]> {
  const q = db<NodePoolRow>("node_pools").orderBy([{ column: "cluster_id" }, { column: "name" }]);
  if (clusterId) q.where({ cluster_id: clusterId });
  return q;
}

export async function findNodePoolRow(db: Knex, id: string): Promise<NodePoolRow | undefined> {
  return db<NodePoolRow>("node_pools").where({ id }).first();
}

/** Locks the cluster's pools: two creates on one cluster check overlap one after the other. */
export async function lockClusterPools(db: Knex, clusterId: string): Promise<void> {
  await db.raw("SELECT pg_advisory_xact_lock(hashtext(?))", [`node_pools:${clusterId}`]);
}

export async function insertNodePoolRow(db: Knex, row: Omit<NodePoolRow, "updated_at">): Promise<NodePoolRow> {
  const [r] = await db<NodePoolRow>("node_pools")
    .insert({ ...row, updated_at: row.created_at })
    .returning("*");
  return r as NodePoolRow;
}

export async function updateNodePoolRow(
  db: Knex,
  id: string,
  patch: Partial<Pick<NodePoolRow, "name" | "description" | "label_key" | "label_values">>,
  at: Date,
): Promise<NodePoolRow | undefined> {
  const [r] = await db<NodePoolRow>("node_pools")
    .where({ id })
    .update({ ...patch, updated_at: at })
    .returning("*");
  return r;
}

export async function deleteNodePoolRow(db: Knex, id: string): Promise<boolean> {
  return (await db("node_pools").where({ id }).delete()) > 0;
}

export async function grantsOfPools(db: Knex, poolIds: readonly string[]): Promise<NodePoolGrantRow[]> {
  if (poolIds.length === 0) return [];
  return db<NodePoolGrantRow>("node_pool_grants")
    .whereIn("pool_id", poolIds as string[])
    .orderBy([{ column: "created_at" }, { column: "id" }]);
}

export async function insertGrantRow(db: Knex, row: NodePoolGrantRow): Promise<NodePoolGrantRow | undefined> {
  const [r] = await db<NodePoolGrantRow>("node_pool_grants")
    .insert(row)
    .onConflict(["pool_id", "grantee_kind", "grantee_id"])
    .ignore()
    .returning("*");
  return r;
}

export async function deleteGrantRow(db: Knex, poolId: string, grantId: string): Promise<NodePoolGrantRow | undefined> {
  const [r] = await db<NodePoolGrantRow>("node_pool_grants")
    .where({ pool_id: poolId, id: grantId })
    .delete()
    .returning("*");
  return r;
}

/** Every pool with its grantees as placement reads them (`organization:<id>`, `project:<id>`). */
export async function nodePoolRefs(
  db: Knex,
): Promise<{ id: string; clusterId: string; label: { key: string; values: string[] }; grantees: string[] }[]> {
  const pools = await db<NodePoolRow>("node_pools")
    .join("clusters as c", "c.id", "node_pools.cluster_id")
    .whereNull("c.deregistered_at")
    .select("node_pools.*")
    .orderBy("node_pools.id");
  const grants = await grantsOfPools(
    db,
    pools.map((p) => p.id),
  );
  return pools.map((p) => ({
    id: p.id,
    clusterId: p.cluster_id,
    label: { key: p.label_key, values: p.label_values },
    grantees: grants.filter((g) => g.pool_id === p.id).map((g) => `${g.grantee_kind}:${g.grantee_id}`),
  }));
}
