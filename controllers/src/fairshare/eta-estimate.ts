// The queue ETA's estimates (eta.ts), one per waiting request: from the simulation's samples (p10/p50/p90
// of the start, and per cluster), or, for a model without enough finished runs, from the recent rate of
// admissions (the wait for the k-th admission of a Poisson stream); and the plain ones, placed now or never.
import type { Waiting } from "../placement/types.ts";
import type { SimResult } from "./eta-simulation.ts";
import { push, quantile } from "./eta-stats.ts";
import type { ClusterEta, Eta } from "./eta-types.ts";

const MIN = 60_000;
/** The fallback's window of recent admissions. */
const RATE_WINDOW = 6 * 60 * MIN;

/** A request the plan places now. */
export function placedNow(key: string, asOf: string): Eta {
  return {
    key,
    asOf,
    p10Ms: 0,
    p50Ms: 0,
    p90Ms: 0,
    perCluster: [],
    method: "simulation",
    reason: "Placed",
    message: "starts now",
  };
}

/** A request that cannot start as things are (eta-standings.ts neverReason). */
export function never(key: string, asOf: string, w: Waiting): Eta {
  return {
    key,
    asOf,
    p10Ms: Number.POSITIVE_INFINITY,
    p50Ms: Number.POSITIVE_INFINITY,
    p90Ms: Number.POSITIVE_INFINITY,
    perCluster: [],
    method: "never",
    reason: w.reason,
    message: `cannot start while ${w.message}`,
  };
}

export function fromSamples(key: string, asOf: string, reason: string, now: number, sims: readonly SimResult[]): Eta {
  const waits: number[] = [];
  const byCluster = new Map<string, number[]>();
  for (const s of sims) {
    const st = s.starts.get(key);
    const wait = st ? st.at - now : Number.POSITIVE_INFINITY;
    waits.push(wait);
    if (st) push(byCluster, st.clusterId, wait);
  }
  waits.sort((a, b) => a - b);
  const perCluster: ClusterEta[] = [...byCluster.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([clusterId, l]) => {
      l.sort((a, b) => a - b);
      return { clusterId, share: l.length / sims.length, p50Ms: quantile(l, 0.5), p90Ms: quantile(l, 0.9) };
    });
  const p10 = quantile(waits, 0.1);
  const p50 = quantile(waits, 0.5);
  const p90 = quantile(waits, 0.9);
  return {
    key,
    asOf,
    p10Ms: p10,
    p50Ms: p50,
    p90Ms: p90,
    perCluster,
    method: "simulation",
    reason,
    message: `starts in about ${minutes(p50)} (${minutes(p10)}–${minutes(p90)})`,
  };
}

/** Admissions per ms over the recent window (a span of a quarter of an hour at least). */
export function admissionRate(recentStarts: readonly string[], now: number): number {
  const recent = recentStarts.map((s) => Date.parse(s)).filter((s) => s <= now && s > now - RATE_WINDOW);
  const span = Math.max(15 * MIN, now - Math.min(now, ...recent));
  return recent.length / span;
}

/** The fallback: the wait for the `k`-th admission at `rate`. */
export function fromThroughput(key: string, asOf: string, reason: string, k: number, rate: number): Eta {
  const [p10, p50, p90] =
    rate > 0
      ? [erlang(k, rate, -Z90), erlang(k, rate, 0), erlang(k, rate, Z90)]
      : [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
  return {
    key,
    asOf,
    p10Ms: p10,
    p50Ms: p50,
    p90Ms: p90,
    perCluster: [],
    method: "throughput",
    reason,
    message:
      rate > 0
        ? `starts in about ${minutes(p50)} (${minutes(p10)}–${minutes(p90)}: #${k} in line; recently about ${Math.round(rate * 60 * MIN)} sessions started an hour)`
        : "no estimate yet: no session has started recently",
  };
}

export function minutes(ms: number): string {
  if (!Number.isFinite(ms)) return "∞";
  const m = Math.round(ms / MIN);
  if (m < 90) return `${m} min`;
  const h = m / 60;
  return h < 48 ? `${h.toFixed(1)} h` : `${(h / 24).toFixed(1)} days`;
}

/** Quantiles of Gamma(k, 1/rate), Wilson–Hilferty: the wait for the k-th admission of a Poisson stream. */
function erlang(k: number, rate: number, z: number): number {
  const c = 1 - 1 / (9 * k) + z / (3 * Math.sqrt(k));
  return (k / rate) * Math.max(0, c) ** 3;
}

const Z90 = 1.2816;
