// Live usage of one session from `usage_samples` (written by POST /internal/v1/usage, deduplicated by
// (cluster, sample id)): the latest samples, newest first, and the totals over every sample. The table's
// (session, period_start) index serves both. Read through domain/sessions/usage.ts.
import type { Knex } from "knex";

export interface UsageSampleRow {
  cluster_id: string;
  sample_id: string;
  period_start: Date;
  period_end: Date;
  gpu_seconds: string; // numeric(14,3): pg answers a string; kept exact until presented
  gpu_utilization: string | null;
  gpu_memory_mib: number | null;
}

export async function latestUsageSamples(db: Knex, sessionId: string, limit: number): Promise<UsageSampleRow[]> {
  return db("usage_samples")
    .select<UsageSampleRow[]>(
      "cluster_id",
      "sample_id",
      "period_start",
      "period_end",
      "gpu_seconds",
      "gpu_utilization",
      "gpu_memory_mib",
    )
    .where("session", sessionId)
    .orderBy([
      { column: "period_start", order: "desc" },
      { column: "sample_id", order: "desc" },
    ])
    .limit(limit);
}

export interface UsageTotals {
  samples: number;
  gpuSeconds: string;
  firstStart: Date | null;
  lastEnd: Date | null;
}

export async function usageTotals(db: Knex, sessionId: string): Promise<UsageTotals> {
  const row = (await db("usage_samples")
    .where({ session: sessionId })
    .first(
      db.raw("count(*)::int AS samples"),
      db.raw("coalesce(sum(gpu_seconds), 0)::text AS gpu_seconds"),
      db.raw("min(period_start) AS first_start"),
      db.raw("max(period_end) AS last_end"),
    )) as { samples: number; gpu_seconds: string; first_start: Date | null; last_end: Date | null } | undefined;
  return {
    samples: row?.samples ?? 0,
    gpuSeconds: row?.gpu_seconds ?? "0",
    firstStart: row?.first_start ?? null,
    lastEnd: row?.last_end ?? null,
  };
}
