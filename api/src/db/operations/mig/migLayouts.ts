// MIG layouts (docs/dev/gpu-sharing.md): an administrator's mark that a cluster's nodes of one model,
// selected by one label requirement, are partitioned into these instances per card. One function per
// operation; the caller passes the transaction.
import type { Knex } from "knex";

export interface MigLayoutRow {
  id: string;
  cluster_id: string;
  gpu_model: string;
  label_key: string;
  label_values: string[];
  /** Instances per card, by profile. */
  profiles: Record<string, number>;
  created_by: string | null;
  created_at: Date;
}

export async function listMigLayoutRows(db: Knex, clusterId: string): Promise<MigLayoutRow[]> {
  return db<MigLayoutRow>("mig_layouts").where({ cluster_id: clusterId }).orderBy("created_at").orderBy("id");
}

/** Serialises layout writes of one cluster, so two overlapping creates cannot both pass the check. */
export async function lockClusterMigLayouts(db: Knex, clusterId: string): Promise<void> {
  await db.raw("SELECT pg_advisory_xact_lock(hashtext(?))", [`mig_layouts:${clusterId}`]);
}

export async function findMigLayoutRow(db: Knex, clusterId: string, id: string): Promise<MigLayoutRow | undefined> {
  return db<MigLayoutRow>("mig_layouts").where({ cluster_id: clusterId, id }).first();
}

export async function insertMigLayoutRow(db: Knex, row: MigLayoutRow): Promise<MigLayoutRow> {
  const [r] = await db("mig_layouts")
    .insert({ ...row, profiles: JSON.stringify(row.profiles) })
    .returning("*");
  return r as MigLayoutRow;
}

export async function deleteMigLayoutRow(db: Knex, clusterId: string, id: string): Promise<number> {
  return db("mig_layouts").where({ cluster_id: clusterId, id }).delete();
}

/** Every live cluster's layouts, as placement and availability match them against node labels. */
export async function migLayoutRefs(db: Knex): Promise<MigLayoutRow[]> {
  return db<MigLayoutRow>("mig_layouts")
    .join("clusters as c", "c.id", "mig_layouts.cluster_id")
    .whereNull("c.deregistered_at")
    .select("mig_layouts.*")
    .orderBy("mig_layouts.id");
}

/**
 * A node's MIG instances Berth offers: those it advertises, of the profiles of the layouts whose label and
 * model it matches. Undefined when none.
 */
export function offeredMig(
  layouts: readonly MigLayoutRow[],
  node: {
    cluster_id: string;
    gpu_model: string | null;
    labels: Record<string, string>;
    mig: Record<string, { allocatable: number; in_use: number }> | null;
  },
): Record<string, { allocatable: number; inUse: number }> | undefined {
  if (!node.mig) return undefined;
  let out: Record<string, { allocatable: number; inUse: number }> | undefined;
  for (const l of layouts) {
    if (l.cluster_id !== node.cluster_id || l.gpu_model !== node.gpu_model) continue;
    const v = node.labels?.[l.label_key];
    if (v === undefined || !l.label_values.includes(v)) continue;
    for (const profile of Object.keys(l.profiles)) {
      const q = node.mig[profile];
      if (!q) continue;
      out ??= {};
      out[profile] = { allocatable: q.allocatable, inUse: q.in_use };
    }
  }
  return out;
}
