import type { Knex } from "knex";

/** Cards Berth's sessions hold (phases that hold a GPU), with each slice's share, for availability. */
export async function cardHoldings(db: Knex): Promise<
  {
    cluster_id: string;
    node: string | null;
    gpu_cards: string[];
    gpu_slice_memory_mib: number | null;
    gpu_slices_per_card: number | null;
  }[]
> {
  return (await db("sessions")
    .whereIn("phase", ["Starting", "Resuming", "Running", "Restarting", "Pausing", "Terminating", "Unknown"])
    .whereNotNull("cluster_id")
    .whereNotNull("gpu_cards")
    .select("cluster_id", "node", "gpu_cards", "gpu_slice_memory_mib", "gpu_slices_per_card")) as never;
}
