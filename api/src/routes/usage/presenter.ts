import type { UsageSampleRow, UsageTotals } from "../../domain/sessions/usage.ts";

export function presentPoint(r: UsageSampleRow) {
  return {
    start: r.period_start.toISOString(),
    end: r.period_end.toISOString(),
    gpu_seconds: Number(r.gpu_seconds),
    gpu_utilization: r.gpu_utilization === null ? null : Number(r.gpu_utilization),
    gpu_memory_mib: r.gpu_memory_mib,
  };
}

/** `newestFirst` as read; the series is answered oldest first. */
export function presentUsage(sessionId: string, newestFirst: UsageSampleRow[], totals: UsageTotals) {
  const latest = newestFirst[0];
  return {
    session_id: sessionId,
    latest: latest ? presentPoint(latest) : null,
    totals: {
      samples: totals.samples,
      gpu_seconds: Number(totals.gpuSeconds),
      since: totals.firstStart?.toISOString() ?? null,
      until: totals.lastEnd?.toISOString() ?? null,
    },
    series: [...newestFirst].reverse().map(presentPoint),
  };
}
