import type { Knex } from "knex";

/** Whole GPUs Berth's sessions hold per cluster and model (phases that hold a GPU), for availability; slices count on their cards. */
export async function gpuHoldings(db: Knex): Promise<{ cluster_id: string; gpu_model: string; gpus: number }[]> {
  return (await db("sessions")
    .whereIn("phase", ["Starting", "Resuming", "Running", "Restarting", "Pausing", "Terminating", "Unknown"])
    .whereNotNull("cluster_id")
    .whereNull("gpu_slices_per_card")
    .whereNull("gpu_mig_profile")
    .groupBy("cluster_id", "gpu_model")
    .select("cluster_id", "gpu_model", db.raw("sum(gpu_count)::int as gpus"))) as {
    cluster_id: string;
    gpu_model: string;
    gpus: number;
  }[];
}
