// The simulated trace bench/src/fair-share-eta.ts replays: a fleet of 64 H100, Poisson arrivals with a daily
// cycle, sizes 1/2/4 GPUs from three organizations with different mixes, lognormal lengths capped by an
// 8-hour time limit. Pure and seeded: the same seed gives the same trace.
import { type LengthSample, normal, seededRandom } from "@berth/controllers";

export const H100 = "NVIDIA-H100-80GB-HBM3";
export const MIN = 60_000;
export const DAY = 24 * 60 * MIN;
export const MAX_RUNTIME = 8 * 60 * MIN;
const MEDIAN_LENGTH = 60 * MIN;
const SIGMA = 1.0;
const T0 = Date.parse("2026-11-02T00:00:00.000Z");
/** A trace time (ms from its start) as a timestamp. */
export const iso = (t: number) => new Date(T0 + t).toISOString();

const SIZES = [
  { gpus: 1, p: 0.6 },
  { gpus: 2, p: 0.25 },
  { gpus: 4, p: 0.15 },
];
export const ORGS = [
  { org: "physics", p: 0.5, sizeBias: 0 },
  { org: "biology", p: 0.3, sizeBias: 0.1 },
  { org: "nlp", p: 0.2, sizeBias: 0.25 },
];
export const CAPACITY = 64;

export interface Session {
  key: string;
  org: string;
  gpus: number;
  arrival: number;
  length: number;
  start?: number;
  cluster?: string;
}

export interface Trace {
  sessions: Session[];
  /** The mean arrival rate per ms that gives the utilisation asked for. */
  baseRate: number;
}

/** The entry where the cumulative share passes u (the last one when u ≥ the total). */
export function pick<T extends { p: number }>(list: readonly T[], u: number): T {
  let acc = 0;
  for (const x of list) {
    acc += x.p;
    if (u <= acc) return x;
  }
  return list[list.length - 1] as T;
}

const lengthOf = (z: number) => Math.min(MAX_RUNTIME, MEDIAN_LENGTH * Math.exp(SIGMA * z));

/** An organization's true arrival rate at t: what the last hours' count estimates, lagging the daily cycle. */
export const trueRate = (baseRate: number, org: string, t: number) =>
  baseRate * (1 + 0.5 * Math.sin((2 * Math.PI * t) / DAY)) * (ORGS.find((o) => o.org === org)?.p ?? 0);

/** `days` of arrivals at a mean `utilisation` of the fleet (thinning for the daily cycle). */
export function arrivals(seed: number, utilisation: number, days: number): Trace {
  const r = seededRandom(seed * 7919 + Math.round(utilisation * 100));
  // Mean GPU-minutes per session: E[gpus] × E[min(lognormal, cap)] (estimated by sampling).
  let meanLen = 0;
  const probe = seededRandom(99);
  for (let i = 0; i < 20_000; i++) meanLen += lengthOf(normal(probe));
  meanLen /= 20_000;
  let meanGpus = 0;
  for (let i = 0; i < 20_000; i++) meanGpus += pick(SIZES, probe() - pick(ORGS, probe()).sizeBias).gpus;
  meanGpus /= 20_000;
  const rate = (utilisation * CAPACITY) / (meanGpus * meanLen); // per ms
  const peak = rate * 1.5;
  const out: Session[] = [];
  let t = 0;
  let n = 0;
  while (t < days * DAY) {
    t += -Math.log(1 - r()) / peak;
    const cycle = 1 + 0.5 * Math.sin((2 * Math.PI * t) / DAY);
    if (r() * 1.5 > cycle) continue;
    const org = pick(ORGS, r());
    const size = pick(SIZES, r() - org.sizeBias);
    out.push({ key: `${org.org}/s${n++}`, org: org.org, gpus: size.gpus, arrival: t, length: lengthOf(normal(r)) });
  }
  return { sessions: out, baseRate: rate };
}

/** 999 lengths drawn from the trace's own law (capped), for the oracle rows. */
export const TRUE_LAW: LengthSample[] = (() => {
  const r = seededRandom(4242);
  return Array.from({ length: 999 }, () => ({ gpuModel: H100, cards: 1, lengthMs: lengthOf(normal(r)) }));
})();
