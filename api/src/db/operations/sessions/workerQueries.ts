// The worker's reads of what operators reported (clusters' liveness, inventory, session status).
import type { InventoryNodeView } from "@berth/controllers";
import type { Knex } from "knex";
import { migLayoutRefs, offeredMig } from "../mig/migLayouts.ts";
import { nodePoolRefs } from "../nodePools/nodePools.ts";

export async function clusterLiveness(
  db: Knex,
): Promise<{ id: string; deregistered_at: Date | null; last_report_at: Date | null }[]> {
  return (await db("clusters").select("id", "deregistered_at", "last_report_at")) as never;
}

export interface InventoryCardRow {
  cluster_id: string;
  node_name: string;
  uuid: string;
  memory_mib: number | null;
  cores: number | null;
  split: number | null;
  healthy: boolean | null;
  memory_used_mib: number | null;
  cores_used: number | null;
  vgpus_used: number | null;
}

export async function inventoryNodes(db: Knex): Promise<
  {
    cluster_id: string;
    name: string;
    gpu_model: string | null;
    gpu_allocatable: number;
    gpu_in_use: number;
    schedulable: boolean;
    ready: boolean;
    gpu_sharing: string | null;
    labels: Record<string, string>;
    mig: Record<string, { allocatable: number; in_use: number }> | null;
    cards?: InventoryCardRow[];
  }[]
> {
  const [nodes, cards] = await Promise.all([
    db("cluster_nodes as n")
      .join("clusters as c", "c.id", "n.cluster_id")
      .whereNull("c.deregistered_at")
      .select(
        "n.cluster_id",
        "n.name",
        "n.gpu_model",
        "n.gpu_allocatable",
        "n.gpu_in_use",
        "n.schedulable",
        "n.ready",
        "n.gpu_sharing",
        "n.labels",
        "n.mig",
      ) as Promise<
      {
        cluster_id: string;
        name: string;
        gpu_model: string | null;
        gpu_allocatable: number;
        gpu_in_use: number;
        schedulable: boolean;
        ready: boolean;
        gpu_sharing: string | null;
        labels: Record<string, string>;
        mig: Record<string, { allocatable: number; in_use: number }> | null;
        cards?: InventoryCardRow[];
      }[]
    >,
    // The cards of nodes with a sharing layer (placement packs slices onto them), in index order.
    db("gpu_devices as d")
      .join("cluster_nodes as n", function () {
        this.on("n.cluster_id", "d.cluster_id").andOn("n.name", "d.node_name");
      })
      .join("clusters as c", "c.id", "d.cluster_id")
      .whereNull("c.deregistered_at")
      .whereNotNull("n.gpu_sharing")
      .whereNotNull("d.uuid")
      .orderBy([{ column: "d.cluster_id" }, { column: "d.node_name" }, { column: "d.index" }])
      .select(
        "d.cluster_id",
        "d.node_name",
        "d.uuid",
        "d.memory_mib",
        "d.cores",
        "d.split",
        "d.healthy",
        "d.memory_used_mib",
        "d.cores_used",
        "d.vgpus_used",
      ) as Promise<InventoryCardRow[]>,
  ]);
  const byNode = new Map<string, InventoryCardRow[]>();
  for (const c of cards) {
    const k = `${c.cluster_id}/${c.node_name}`;
    byNode.set(k, [...(byNode.get(k) ?? []), c]);
  }
  for (const n of nodes) {
    const list = byNode.get(`${n.cluster_id}/${n.name}`);
    if (n.gpu_sharing && list) n.cards = list;
  }
  return nodes;
}

export interface StatusReportRow {
  cluster_id: string;
  session: string;
  phase: string;
  node: string | null;
  gpu_devices: unknown[] | null;
  reason: string | null;
  message: string | null;
  observed_generation: string | number | null;
  at: Date;
}

/** Reports of these sessions, or of every session whose resource still exists (not all history). */
export async function statusReports(db: Knex, sessions?: readonly string[]): Promise<StatusReportRow[]> {
  const q = db("session_status_reports as r").select("r.*");
  if (sessions) {
    if (sessions.length === 0) return [];
    q.whereIn("r.session", sessions as string[]);
  } else {
    q.join("sessions as s", "s.id", "r.session").whereNull("s.resource_deleted_at");
  }
  return (await q) as StatusReportRow[];
}

/** A session's resource is gone: its reports are of no use any more. */
export async function deleteStatusReports(db: Knex, sessionId: string): Promise<number> {
  return db("session_status_reports").where({ session: sessionId }).delete();
}

/** Of these sessions, those placed on the cluster now or before: what its operator may report on. */
export async function sessionsOfCluster(
  db: Knex,
  clusterId: string,
  sessionIds: readonly string[],
): Promise<Set<string>> {
  const out = new Set<string>();
  for (let i = 0; i < sessionIds.length; i += 1000) {
    const rows = (await db("sessions")
      .whereIn("id", sessionIds.slice(i, i + 1000) as string[])
      .select("id", "cluster_id", "placed_clusters")) as {
      id: string;
      cluster_id: string | null;
      placed_clusters: string[];
    }[];
    for (const r of rows)
      if (r.cluster_id === clusterId || (r.placed_clusters ?? []).includes(clusterId)) out.add(r.id);
  }
  return out;
}

/** The inventory as placement reads it: whole GPUs per node, and card by card where a sharing layer runs. */
export async function placementInventory(db: Knex): Promise<InventoryNodeView[]> {
  const [nodes, pools, layouts] = await Promise.all([inventoryNodes(db), nodePoolRefs(db), migLayoutRefs(db)]);
  // Each node with the pools whose label it carries (docs/dev/node-pools.md): placement reads who may use it.
  const poolsOf = (n: { cluster_id: string; labels: Record<string, string> }) =>
    pools.filter((p) => p.clusterId === n.cluster_id && p.label.values.includes(n.labels?.[p.label.key] as string));
  return nodes.map((n) => ({
    clusterId: n.cluster_id,
    name: n.name,
    gpuModel: n.gpu_model,
    gpuAllocatable: n.gpu_allocatable,
    gpuInUse: n.gpu_in_use,
    schedulable: n.schedulable,
    ready: n.ready,
    ...(n.gpu_sharing === "hami" && n.cards
      ? {
          sharing: "hami" as const,
          cards: n.cards.map((c) => ({
            uuid: c.uuid,
            memoryMib: c.memory_mib ?? 0,
            cores: c.cores ?? 100,
            split: c.split ?? 1,
            healthy: c.healthy !== false,
            memoryUsedMib: c.memory_used_mib ?? 0,
            coresUsed: c.cores_used ?? 0,
            vgpusUsed: c.vgpus_used ?? 0,
          })),
        }
      : {}),
    ...(pools.length > 0 && poolsOf(n).length > 0 ? { pools: poolsOf(n) } : {}),
    ...withMig(layouts.length > 0 ? offeredMig(layouts, n) : undefined),
  }));
}

function withMig(mig: InventoryNodeView["mig"]): Pick<InventoryNodeView, "mig"> {
  return mig ? { mig } : {};
}
