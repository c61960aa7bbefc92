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

/**
 * Keeps the newest report per (cluster, session); an older one arriving late changes nothing. One
 * statement per 1,000 reports (an operator's heartbeat re-sends every state it knows): a batch naming a
 * session twice keeps its newest report, as separate calls would.
 *
 * Answers how many reports were taken: of each session whose newest report was stored, the reports not
 * older than those before them in the batch (a batch whose newest is older than the stored row counts none
 * of that session's). Separate calls would count the same except for a report older than the stored row
 * but followed by a newer one, which this counts too: the figure is for the operator's logs, not a receipt.
 */
export async function upsertSessionStatusReports(
  db: Knex,
  clusterId: string,
  reports: SessionStatusReportInput[],
): Promise<number> {
  const newest = new Map<string, SessionStatusReportInput>();
  const inOrder = new Map<string, number>(); // session -> reports not older than those before them
  for (const r of reports) {
    const kept = newest.get(r.session);
    if (!kept || kept.at.getTime() <= r.at.getTime()) {
      newest.set(r.session, r);
      inOrder.set(r.session, (inOrder.get(r.session) ?? 0) + 1);
    }
  }
  // In session order: two batches of one cluster written at once then lock their rows in the same order
  // (no deadlock).
  const sorted = [...newest.values()].sort((a, b) => (a.session < b.session ? -1 : a.session > b.session ? 1 : 0));
  const rows = sorted.map((r) => ({
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
  }));
  let applied = 0;
  for (let i = 0; i < rows.length; i += 1000) {
    const done: { session: string }[] = await db("session_status_reports")
      .insert(rows.slice(i, i + 1000))
      .onConflict(["cluster_id", "session"])
      .merge()
      .where("session_status_reports.at", "<=", db.raw("excluded.at"))
      .returning("session");
    for (const d of done) applied += inOrder.get(d.session) as number;
  }
  return applied;
}
