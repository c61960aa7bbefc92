import type { Knex } from "knex";

/** Records a cluster's latest capacity report (one small upsert per report; the Pool is not written). */
export async function recordStorageReport(
  db: Knex,
  clusterId: string,
  observedAt: Date,
  intervalMs: number | null,
): Promise<void> {
  await db("storage_reports")
    .insert({ cluster_id: clusterId, observed_at: observedAt, interval_ms: intervalMs })
    .onConflict("cluster_id")
    .merge(["observed_at", "interval_ms"]);
}

export async function lastStorageReports(
  db: Knex,
): Promise<Map<string, { observedAt: Date; intervalMs: number | null }>> {
  const rows = (await db("storage_reports").select("*")) as {
    cluster_id: string;
    observed_at: Date;
    interval_ms: number | null;
  }[];
  return new Map(rows.map((r) => [r.cluster_id, { observedAt: r.observed_at, intervalMs: r.interval_ms }]));
}
