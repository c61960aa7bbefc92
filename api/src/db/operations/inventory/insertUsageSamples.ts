import type { Knex } from "knex";

export interface UsageSampleInput {
  id: string;
  session: string;
  start: Date;
  end: Date;
  gpu_seconds: number;
  gpu_utilization?: number | null;
  gpu_memory_mib?: number | null;
}

/** Inserts what is new; a sample id already stored for the cluster is a duplicate and is dropped. */
export async function insertUsageSamples(
  db: Knex,
  clusterId: string,
  samples: UsageSampleInput[],
): Promise<{ accepted: number; duplicates: number }> {
  if (samples.length === 0) return { accepted: 0, duplicates: 0 };
  // Duplicates inside one batch count as duplicates too (ON CONFLICT cannot see rows of its own insert).
  // Sorted by id: concurrent batches that overlap (a retry racing the next batch) then take their row
  // locks in one order, so they wait for each other instead of deadlocking (40P01).
  const unique = [...new Map(samples.map((s) => [s.id, s])).values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const inserted = await db("usage_samples")
    .insert(
      unique.map((s) => ({
        cluster_id: clusterId,
        sample_id: s.id,
        session: s.session,
        period_start: s.start,
        period_end: s.end,
        gpu_seconds: s.gpu_seconds,
        gpu_utilization: s.gpu_utilization ?? null,
        gpu_memory_mib: s.gpu_memory_mib ?? null,
      })),
    )
    .onConflict(["cluster_id", "sample_id"])
    .ignore()
    .returning("sample_id");
  return { accepted: inserted.length, duplicates: samples.length - inserted.length };
}
