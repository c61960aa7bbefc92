// What bench/src/fair-share-eta.ts records at each queued arrival and how it scores the estimators against
// the actual starts. Pure.
import { lowerMedian } from "../kit/median.ts";
import { DAY, MIN, type Session } from "./trace.ts";

export interface Prediction {
  key: string;
  at: number;
  /** Place in the queue at arrival (1: first in line). */
  position: number;
  berth: { p10: number; p50: number; p90: number; method: string };
  /** The same estimate drawing finished lengths widened by a kernel (lengthFit "empirical"). */
  empirical: { p10: number; p50: number; p90: number };
  /** The fit handed the trace's true length law: what no length model can beat on this trace. */
  oracle: { p10: number; p50: number; p90: number };
  /** berth with the arrivals expected to rank ahead (--order=fair only). */
  arrivals?: { p10: number; p50: number; p90: number };
  /** The same with the trace's own length law: what is left is the queue's order, not lengths. */
  oracleArrivals?: { p10: number; p50: number; p90: number };
  /** berth with arrivals at the trace's true rate now instead of the last hours' count. */
  rateArrivals?: { p10: number; p50: number; p90: number };
  /** Place in the queue's order at arrival (1: first); with --order=fair not the arrival order. */
  rank: number;
  /** Keys waiting at arrival that ranked ahead of it then. */
  ahead: string[];
  /** Keys waiting at arrival that ranked behind it then. */
  behind: string[];
  gshare: number;
  depth: number;
  slurm: number;
}

export interface TraceResult {
  sessions: Session[];
  predictions: Prediction[];
  instant: number;
  measured: number;
  estimateMs: number[];
  /** Starts after warm-up of a session that arrived after one still waiting: what a model of new arrivals ahead would have to foresee. */
  overtakes: number;
}

export interface Scored {
  n: number;
  medianAbsMin: number;
  biasMin: number;
  within1: number;
  within10: number;
  /** For waits > 5 min: median |error| ÷ actual wait. */
  relLong: number;
  nLong: number;
  inBand?: number;
  belowP90?: number;
}

/** How close `pick`'s predictions came to the actual starts; with `band`, how often the start fell in it. */
export function score(
  result: TraceResult,
  pick: (p: Prediction) => number,
  band?: (p: Prediction) => { p10: number; p90: number },
): Scored {
  const bySession = new Map(result.sessions.map((s) => [s.key, s]));
  const errors: number[] = [];
  const rel: number[] = [];
  let inBand = 0;
  let below = 0;
  let n = 0;
  for (const p of result.predictions) {
    const s = bySession.get(p.key) as Session;
    if (s.start === undefined) continue;
    const actual = s.start - p.at;
    const predicted = Math.min(pick(p), 30 * DAY);
    n++;
    errors.push(predicted - actual);
    if (actual > 5 * MIN) rel.push(Math.abs(predicted - actual) / actual);
    if (band) {
      const b = band(p);
      if (actual >= b.p10 && actual <= b.p90) inBand++;
      if (actual <= b.p90) below++;
    }
  }
  const abs = errors.map(Math.abs);
  return {
    n,
    medianAbsMin: lowerMedian(abs) / MIN,
    biasMin: errors.reduce((a, b) => a + b, 0) / Math.max(1, n) / MIN,
    within1: abs.filter((e) => e <= MIN).length / Math.max(1, n),
    within10: abs.filter((e) => e <= 10 * MIN).length / Math.max(1, n),
    relLong: lowerMedian(rel),
    nLong: rel.length,
    ...(band ? { inBand: inBand / Math.max(1, n), belowP90: below / Math.max(1, n) } : {}),
  };
}

/** A share as a whole percent; — for none. */
export const pctf = (x: number | undefined) => (x === undefined ? "—" : `${(x * 100).toFixed(0)} %`);

/** A row of the printed table: one estimator's figures. */
export const tableRow = (s: Scored) => ({
  "median |err| min": s.medianAbsMin.toFixed(1),
  "bias min": s.biasMin.toFixed(1),
  "±1 min": pctf(s.within1),
  "±10 min": pctf(s.within10),
  "rel err (wait>5m)": `${pctf(s.relLong)} (n=${s.nLong})`,
  "in [p10,p90]": pctf(s.inBand),
  "≤ p90": pctf(s.belowP90),
});
