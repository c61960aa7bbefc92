import type { Knex } from "knex";

export interface UnbilledSample {
  cluster_id: string;
  sample_id: string;
  session: string;
  period_start: Date;
  period_end: Date;
}

/**
 * Takes up to `limit` usage samples nobody has billed, locking them; rows another biller holds are
 * skipped (SKIP LOCKED), so the API's inline billing and the worker's sweep share the work without
 * waiting for each other and without billing one sample twice.
 */
export async function lockUnbilledSamples(
  tx: Knex.Transaction,
  opts: { clusterId?: string; limit: number; receivedBefore?: Date },
): Promise<UnbilledSample[]> {
  const q = tx("usage_samples")
    .select("cluster_id", "sample_id", "session", "period_start", "period_end")
    .whereNull("billed_at")
    .orderBy("received_at")
    .limit(opts.limit)
    .forUpdate()
    .skipLocked();
  if (opts.clusterId) q.where("cluster_id", opts.clusterId);
  if (opts.receivedBefore) q.where("received_at", "<", opts.receivedBefore);
  return (await q) as UnbilledSample[];
}

export async function markSamplesBilled(
  tx: Knex.Transaction,
  samples: readonly UnbilledSample[],
  at: Date,
): Promise<void> {
  if (samples.length === 0) return;
  const byCluster = new Map<string, string[]>();
  for (const s of samples) byCluster.set(s.cluster_id, [...(byCluster.get(s.cluster_id) ?? []), s.sample_id]);
  for (const [cluster, ids] of byCluster) {
    await tx("usage_samples").where("cluster_id", cluster).whereIn("sample_id", ids).update({ billed_at: at });
  }
}

/**
 * The periods of the sessions' samples already billed that overlap [from, to): what a new sample of
 * theirs must not charge again (domain/credits/coverage.ts). Read under the sessions' carry locks, so a
 * concurrent biller's charges are committed and seen.
 */
export async function billedPeriods(
  tx: Knex.Transaction,
  sessions: readonly string[],
  from: Date,
  to: Date,
): Promise<{ session: string; start: Date; end: Date }[]> {
  if (sessions.length === 0) return [];
  return (await tx("usage_samples")
    .whereIn("session", sessions)
    .whereNotNull("billed_at")
    // By the (session, period_end) index: only what ends after `from`.
    .where("period_end", ">", from)
    .where("period_start", "<", to)
    .select("session", "period_start as start", "period_end as end")) as { session: string; start: Date; end: Date }[];
}
