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

export type GranteeKind = "organization" | "project" | "user";

/** grantee_kind and grantee_id are generated from whichever of organization_id, project_id, user_id is set. */
export interface NodePoolGrantRow {
  id: string;
  pool_id: string;
  grantee_kind: GranteeKind;
  grantee_id: string;
  created_by: string | null;
  created_at: Date;
}

export interface NewGrant {
  id: string;
  pool_id: string;
  grantee: { kind: GranteeKind; id: string };
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
    .select("id", "pool_id", "grantee_kind", "grantee_id", "created_by", "created_at")
    .orderBy([{ column: "created_at" }, { column: "id" }]);
}

export async function insertGrantRow(db: Knex, g: NewGrant): Promise<NodePoolGrantRow | undefined> {
  const [r] = await db("node_pool_grants")
    .insert({
      id: g.id,
      pool_id: g.pool_id,
      [`${g.grantee.kind}_id`]: g.grantee.id,
      created_by: g.created_by,
      created_at: g.created_at,
    })
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

/**
 * Every pool with its grantees as placement reads them (`organization:<id>`, `project:<id>`, `user:<id>`). A
 * grant to a person who belongs to no organization any more is left out: it counts again if they rejoin.
 */
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
  const people = [...new Set(grants.filter((g) => g.grantee_kind === "user").map((g) => g.grantee_id))];
  const members = new Set<string>(
    people.length === 0
      ? []
      : ((await db("memberships").whereIn("user_id", people).distinct("user_id")) as { user_id: string }[]).map(
          (m) => m.user_id,
        ),
  );
  return pools.map((p) => ({
    id: p.id,
    clusterId: p.cluster_id,
    label: { key: p.label_key, values: p.label_values },
    grantees: grants
      .filter((g) => g.pool_id === p.id && (g.grantee_kind !== "user" || members.has(g.grantee_id)))
      .map((g) => `${g.grantee_kind}:${g.grantee_id}`),
  }));
}
