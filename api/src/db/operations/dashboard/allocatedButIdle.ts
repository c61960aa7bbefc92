import type { Knex } from "knex";

/**
 * GPUs of running sessions whose usage samples of the last `windowMinutes` say the GPU is nearly idle
 * (mean utilisation under `belowPercent`), per cluster and model. Sessions without GPU figures are not
 * counted: idle is only said when it is known.
 */
export async function allocatedButIdle(
  db: Knex,
  since: Date,
  belowPercent: number,
  clusterId?: string,
): Promise<{ cluster_id: string; gpu_model: string; gpus: number }[]> {
  const q = db
    .with(
      "idle",
      db("sessions as s")
        .join("usage_samples as u", "u.session", "s.id")
        .where("s.phase", "Running")
        .where("u.period_end", ">=", since)
        .whereNotNull("u.gpu_utilization")
        .groupBy("s.id", "s.cluster_id", "s.gpu_model", "s.gpu_count")
        .havingRaw("avg(u.gpu_utilization) < ?", [belowPercent])
        .select("s.cluster_id", "s.gpu_model", "s.gpu_count"),
    )
    .from("idle")
    .groupBy("cluster_id", "gpu_model")
    .select("cluster_id", "gpu_model", db.raw("sum(gpu_count)::int as gpus"));
  if (clusterId) q.where("cluster_id", clusterId);
  return q;
}
