// The simulated workload bench/src/fair-share-fairness.ts runs a week of: three organizations offering 80, 50
// and 50 % of 64 H100s' worth of work, sessions of 1/2/4 GPUs with lognormal lengths (8-hour cap), half
// opting in to borrowing, each idle a random part of the time. Pure and seeded.
import { normal, seededRandom } from "@berth/controllers";

export const H100 = "NVIDIA-H100-80GB-HBM3";
export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;
const SIZES = [
  { gpus: 1, p: 0.6 },
  { gpus: 2, p: 0.25 },
  { gpus: 4, p: 0.15 },
];

export interface Sess {
  key: string;
  org: string;
  user: string;
  gpus: number;
  mayBorrow: boolean;
  arrival: number;
  /** Work left (ms of running). */
  left: number;
  /** Fraction of its spells that are idle. */
  idleShare: number;
  since: number;
  start?: number;
  cluster?: string;
  capacityClass?: "guaranteed" | "borrowed";
  idle?: boolean;
  pauseAt?: number;
}

/** `days` of sessions from the three organizations, in order of arrival. */
export function workload(seed: number, days: number): Sess[] {
  const r = seededRandom(seed);
  // ~99 min mean length × 1.7 GPUs per session.
  const offered: Record<string, number> = { physics: 0.8, biology: 0.5, nlp: 0.5 };
  const out: Sess[] = [];
  let n = 0;
  for (const org of ["physics", "biology", "nlp"]) {
    const rate = ((offered[org] as number) * 64) / (1.7 * 99) / MIN;
    let t = 0;
    while (true) {
      t += -Math.log(1 - r()) / rate;
      if (t > days * DAY) break;
      let u = r();
      const size = SIZES.find((s) => {
        u -= s.p;
        return u <= 0;
      }) ?? { gpus: 1 };
      out.push({
        key: `${org}/s${n++}`,
        org,
        user: `u${Math.floor(r() * 5)}`,
        gpus: size.gpus,
        mayBorrow: r() < 0.5,
        arrival: t,
        since: t,
        left: Math.min(8 * HOUR, HOUR * Math.exp(normal(r))),
        idleShare: r() * 0.6,
      });
    }
  }
  return out.sort((a, b) => a.arrival - b.arrival);
}
