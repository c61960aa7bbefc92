import type { Knex } from "knex";

export interface SessionStatusReportInput {
  session: string;
  phase: string;
  node?: string | null;
  gpu_devices?: unknown[] | null;
  reason?: string | null;
  message?: string | null;
  observed_generation?: number | null;
  at: Date;
}

/** Keeps the newest report per (cluster, session); an older one arriving late changes nothing. */
export async function upsertSessionStatusReports(
  db: Knex,
  clusterId: string,
  reports: SessionStatusReportInput[],
): Promise<number> {
  let applied = 0;
  for (const r of reports) {
    const rows = await db("session_status_reports")
      .insert({
        cluster_id: clusterId,
        session: r.session,
        phase: r.phase,
        node: r.node ?? null,
        gpu_devices: r.gpu_devices ? JSON.stringify(r.gpu_devices) : null,
        reason: r.reason ?? null,
        message: r.message ?? null,
        observed_generation: r.observed_generation ?? null,
        at: r.at,
        received_at: db.fn.now(),
      })
      .onConflict(["cluster_id", "session"])
      .merge()
      .where("session_status_reports.at", "<=", r.at)
      .returning("session");
    applied += rows.length;
  }
  return applied;
}
