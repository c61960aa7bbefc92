// The worker's reads of what operators reported (clusters' liveness, inventory, session status).
import type { Knex } from "knex";

export async function clusterLiveness(
  db: Knex,
): Promise<{ id: string; deregistered_at: Date | null; last_report_at: Date | null }[]> {
  return (await db("clusters").select("id", "deregistered_at", "last_report_at")) as never;
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
  }[]
> {
  return (await db("cluster_nodes as n")
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
    )) as never;
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
