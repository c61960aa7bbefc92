// How fair a simulated week of bench/src/fair-share-fairness.ts was: each organization's share of the
// GPU-hours against its weighted fair share, and the costs beside it, as one row of the printed table. Pure.
import { lowerMedian } from "../kit/median.ts";
import { upperPercentile } from "../kit/percentile.ts";

/** Weighted fair shares: physics 2 : biology 1 : nlp 1. */
export const FAIR = { physics: 0.5, biology: 0.25, nlp: 0.25 } as Record<string, number>;

export interface WeekResult {
  gpuHours: Record<string, number>;
  reclaims: number;
  activeReclaimed: number;
  activeWhileIdleAvailable: number;
  guaranteedWaitsMin: number[];
  passCpuMs: number;
  gaveUp: number;
}

/** A week's row of the table, over `days` simulated days. */
export function fairnessRow(w: WeekResult, days: number): Record<string, string> {
  const total = Object.values(w.gpuHours).reduce((a, b) => a + b, 0);
  const row: Record<string, string> = {};
  let worst = 0;
  for (const org of Object.keys(FAIR)) {
    const share = (w.gpuHours[org] ?? 0) / total;
    worst = Math.max(worst, Math.abs(share - (FAIR[org] as number)));
    row[`${org} (fair ${(FAIR[org] as number) * 100} %)`] = `${(share * 100).toFixed(1)} %`;
  }
  row["max |dev|"] = `${(worst * 100).toFixed(1)} pts`;
  row["GPU util"] = `${((total / (64 * days * 24)) * 100).toFixed(0)} %`;
  row["reclaims/day"] = (w.reclaims / days).toFixed(1);
  row["active reclaimed"] = String(w.activeReclaimed);
  row["…while idle ones sufficed"] = String(w.activeWhileIdleAvailable);
  row["guaranteed wait p50/p90 min"] =
    `${lowerMedian(w.guaranteedWaitsMin).toFixed(0)}/${upperPercentile(w.guaranteedWaitsMin, 90, 0).toFixed(0)}`;
  row["gave up"] = String(w.gaveUp);
  row["pass CPU ms/min"] = (w.passCpuMs / (days * 1440)).toFixed(2);
  return row;
}
