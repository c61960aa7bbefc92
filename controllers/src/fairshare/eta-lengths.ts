// The queue ETA's length model (eta.ts): how long a session runs, learned from finished runs and the
// running ones (censored) per GPU model and size, and drawn past what a session has run already.
import { normal, normalQuantile, push, quantile, upperTail } from "./eta-stats.ts";
import type { LengthSample } from "./eta-types.ts";

type Size = "slice" | number;
const sizeOf = (cards: number): Size => (cards < 1 ? "slice" : Math.round(cards));

/** A running session's length so far: a length in progress, longer than this (a censored observation). */
export interface LengthInProgress {
  gpuModel: string;
  cards: number;
  startedAt: number;
  elapsedMs: number;
}

/** Finished lengths per model, and per model and size, sorted. */
export class Lengths {
  readonly #byModel = new Map<string, number[]>();
  readonly #bySize = new Map<string, number[]>();
  readonly #fits = new Map<readonly number[], { mu: number; sigma: number }>();
  readonly #min: number;
  readonly kernel: number;
  constructor(
    history: readonly LengthSample[],
    minHistory: number,
    kernel: number,
    fit: "lognormal" | "empirical" = "empirical",
    inProgress: readonly LengthInProgress[] = [],
  ) {
    this.#min = minHistory;
    this.kernel = kernel;
    const cohorts = new Map<string, { ended: FinishedRun[]; open: LengthInProgress[] }>();
    const add = (k: string, f?: FinishedRun, o?: LengthInProgress) => {
      const c = cohorts.get(k) ?? { ended: [], open: [] };
      cohorts.set(k, c);
      if (f) c.ended.push(f);
      if (o) c.open.push(o);
    };
    for (const h of history) {
      if (!(h.lengthMs > 0)) continue;
      push(this.#byModel, h.gpuModel, h.lengthMs);
      push(this.#bySize, `${h.gpuModel}|${sizeOf(h.cards)}`, h.lengthMs);
      const f = { lengthMs: h.lengthMs, endedAt: h.endedAt ? Date.parse(h.endedAt) : Number.NaN };
      add(h.gpuModel, f);
      add(`${h.gpuModel}|${sizeOf(h.cards)}`, f);
    }
    for (const o of inProgress) {
      add(o.gpuModel, undefined, o);
      add(`${o.gpuModel}|${sizeOf(o.cards)}`, undefined, o);
    }
    for (const l of [...this.#byModel.values(), ...this.#bySize.values()]) l.sort((a, b) => a - b);
    if (fit === "lognormal")
      for (const [k, pool] of [...this.#byModel.entries(), ...this.#bySize.entries()]) {
        const c = cohorts.get(k);
        this.#fits.set(pool, lognormalFit(pool, c?.ended ?? [], c?.open ?? []));
      }
  }
  /** Enough finished runs of the model to simulate. */
  known(model: string): boolean {
    return (this.#byModel.get(model)?.length ?? 0) >= this.#min;
  }
  of(model: string, cards: number): number[] {
    const own = this.#bySize.get(`${model}|${sizeOf(cards)}`);
    return own && own.length >= this.#min ? own : (this.#byModel.get(model) ?? []);
  }
  /**
   * A length longer than `elapsed` (pool sorted, `lo` its first index past `elapsed`): from the pool's
   * lognormal fit when there is one (lognormalFit), else drawn from the pool. With a kernel: a
   * finished length times e^(kernel·z), z standard normal, so that a few hundred runs stand for a smooth
   * distribution and its tail rather than only the lengths seen (bootstrap alone made the bands too
   * narrow); a draw not past `elapsed` is drawn again, then the pool past it is used as it is.
   */
  draw(pool: readonly number[], lo: number, elapsed: number, rand: () => number): number {
    const f = this.#fits.get(pool);
    if (f) {
      const x = lognormalPast(f, elapsed, rand);
      if (x !== undefined) return x;
    }
    if (lo >= pool.length) return Number.NaN;
    if (this.kernel > 0)
      for (let i = 0; i < 16; i++) {
        const x = (pool[Math.floor(rand() * pool.length)] as number) * Math.exp(this.kernel * normal(rand));
        if (x > elapsed) return x;
      }
    return pool[lo + Math.floor(rand() * (pool.length - lo))] as number;
  }
}

interface FinishedRun {
  lengthMs: number;
  /** NaN when not known. */
  endedAt: number;
}

/**
 * A lognormal for the lengths of a model (and size): μ the log of the median, σ the log interquartile
 * range ÷ 1.349 (quartiles: robust to the runs cut at a time limit, which sit in the far tail).
 *
 * The quartiles are Kaplan–Meier's over the cohort of runs started since the oldest finished run in
 * `history` ended: the finished ones as lengths, the ones still running as lengths known only to exceed
 * what they have run (censored). Finished runs alone are the short ones of any recent cohort — the long
 * ones are still running — so a window of them that starts at a cold start, or a load that grows, makes
 * the fit early. When the cohort cannot place its lower quartile and median (too few, too censored), the
 * finished runs as they are give the fit.
 */
export function lognormalFit(
  sorted: readonly number[],
  ended: readonly FinishedRun[],
  open: readonly LengthInProgress[],
): { mu: number; sigma: number } {
  let q = [0.25, 0.5, 0.75].map((p) => quantile(sorted, p));
  if (open.length > 0 && ended.length > 0 && ended.every((e) => Number.isFinite(e.endedAt))) {
    const since = Math.min(...ended.map((e) => e.endedAt));
    const events = ended.filter((e) => e.endedAt - e.lengthMs >= since).map((e) => e.lengthMs);
    const censored = open.filter((o) => o.startedAt >= since).map((o) => o.elapsedMs);
    const km = kaplanMeierQuantiles(events, censored, [0.25, 0.5, 0.75]);
    if (Number.isFinite(km[0]) && Number.isFinite(km[1])) q = km;
  }
  const [q25, q50, q75] = q.map((x) => Math.log(Math.max(x, 1))) as [number, number, number];
  // A cohort too young to have three quarters ended still gives σ from its lower half.
  const sigma = Number.isFinite(q75) ? (q75 - q25) / 1.349 : (q50 - q25) / 0.6745;
  return { mu: q50, sigma: Math.max(sigma, 0.05) };
}

/**
 * Quantiles of a length from lengths seen (`events`) and lengths known only to be longer than a value
 * (`censored`), by the Kaplan–Meier product limit; NaN for a quantile the data do not reach.
 */
export function kaplanMeierQuantiles(
  events: readonly number[],
  censored: readonly number[],
  ps: readonly number[],
): number[] {
  // At a tie an event comes before a censoring (the censored one was still at risk then).
  const obs = [...events.map((t) => ({ t, event: 1 })), ...censored.map((t) => ({ t, event: 0 }))].sort(
    (a, b) => a.t - b.t || b.event - a.event,
  );
  let atRisk = obs.length;
  let survival = 1;
  const out = ps.map(() => Number.NaN);
  for (let i = 0; i < obs.length; ) {
    const t = (obs[i] as { t: number }).t;
    let deaths = 0;
    let gone = 0;
    for (; i < obs.length && (obs[i] as { t: number }).t === t; i++) {
      deaths += (obs[i] as { event: number }).event;
      gone++;
    }
    if (deaths > 0) {
      survival *= 1 - deaths / atRisk;
      ps.forEach((p, j) => {
        if (Number.isNaN(out[j] as number) && 1 - survival >= p - 1e-12) out[j] = t;
      });
    }
    atRisk -= gone;
  }
  return out;
}

/** A draw from the lognormal `f` past `elapsed`, by inverting its tail; undefined when that tail is nil. */
function lognormalPast(f: { mu: number; sigma: number }, elapsed: number, rand: () => number): number | undefined {
  const z0 = elapsed > 0 ? (Math.log(elapsed) - f.mu) / f.sigma : Number.NEGATIVE_INFINITY;
  const tail = upperTail(z0); // P(Z > z0)
  if (!(tail > 1e-12)) return undefined;
  const s = Math.max(Number.MIN_VALUE, rand() * tail);
  return Math.max(elapsed + 1, Math.exp(f.mu - f.sigma * normalQuantile(s)));
}
