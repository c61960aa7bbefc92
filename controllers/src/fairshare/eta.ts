// The queue ETA: the real placement (planPlacement, after fair share's admission when it is on) replayed
// forward from the state now, with session lengths drawn from finished runs, a few times over (Monte Carlo)
// for p10/p50/p90 (docs/dev/fair-share.md). Pure and deterministic for a seed. Its parts:
//   - eta-stats.ts: the seeded generator, the standard normal, a sorted sample's quantile;
//   - eta-lengths.ts: the length model (finished runs and, censored, running ones; a lognormal fit);
//   - eta-standings.ts: fair share's admission, the queue as it stands now, what can never start;
//   - eta-simulation.ts: one forward run of placement to the horizon;
//   - eta-estimate.ts: an estimate from the runs' samples, or from the rate of admissions;
//   - this file: estimateQueue, which runs them per waiting request, and the shorter-wait hints.
// Its input and output are eta-types.ts.
import { compareRequests } from "../placement/plan.ts";
import type { PlacementRequest } from "../placement/types.ts";
import { admissionRate, fromSamples, fromThroughput, minutes, never, placedNow } from "./eta-estimate.ts";
import { Lengths } from "./eta-lengths.ts";
import { simulate } from "./eta-simulation.ts";
import { neverReason, standingsNow } from "./eta-standings.ts";
import { seededRandom } from "./eta-stats.ts";
import type { EstimateQueueFn, Eta, EtaInput } from "./eta-types.ts";

export { kaplanMeierQuantiles, type LengthInProgress, lognormalFit } from "./eta-lengths.ts";
// normal: the benches draw their traces with the estimator's own standard normal (bench/src/fair-share-eta/trace.ts).
export { normal, seededRandom } from "./eta-stats.ts";

const MIN = 60_000;
/** Monte Carlo samples: at 24 the p90 (an order statistic of few) fell inside too many actual starts. */
const DEFAULT_SAMPLES = 48;
const DEFAULT_MIN_HISTORY = 20;
/** σ (log space) of the lognormal kernel around each finished length when lengths are drawn as seen. */
const DEFAULT_KERNEL = 0.6;
/** A hint needs the alternative to start this much sooner (and by a fifth at least). */
const HINT_MIN_GAIN = 5 * MIN;

export const estimateQueue: EstimateQueueFn = (input) => {
  const now = Date.parse(input.now);
  const lengths = new Lengths(
    input.history,
    input.minHistory ?? DEFAULT_MIN_HISTORY,
    input.lengthKernel ?? DEFAULT_KERNEL,
    input.lengthFit ?? "lognormal",
    input.running.map((r) => ({
      gpuModel: r.gpuModel,
      cards: r.slice ? 0.5 : r.gpuCount,
      startedAt: Date.parse(r.startedAt),
      elapsedMs: now - Date.parse(r.startedAt),
    })),
  );
  const compare = input.compare ?? compareRequests;
  const waiting = [...input.waiting].sort(compare);
  const { placed: nowPlaced, waiting: nowWaiting, never: cannot } = standingsNow(input, waiting, compare);
  const simulated = waiting.filter((r) => !cannot.has(r.key) && lengths.known(r.gpuModel));

  const samples = input.samples ?? DEFAULT_SAMPLES;
  const runs = (list: readonly PlacementRequest[], from: EtaInput = input) => {
    const rand = seededRandom(input.seed ?? 1);
    return Array.from({ length: samples }, () => simulate(from, list, lengths, rand));
  };
  const sims = simulated.length > 0 ? runs(simulated) : [];
  const rate = admissionRate(input.recentStarts, now);

  const out: Eta[] = [];
  for (const r of waiting) {
    const asOf = input.now;
    if (nowPlaced.has(r.key)) {
      out.push(placedNow(r.key, asOf));
      continue;
    }
    const w = nowWaiting.get(r.key);
    const nw = cannot.get(r.key);
    if (nw) {
      out.push(never(r.key, asOf, nw));
      continue;
    }
    const reason = w?.reason ?? "NoCapacity";
    const eta =
      sims.length > 0 && lengths.known(r.gpuModel)
        ? fromSamples(r.key, asOf, reason, now, sims)
        : fromThroughput(r.key, asOf, reason, w?.position ?? 1, rate);
    const alternatives = input.alternatives?.[r.key];
    if (alternatives && alternatives.length > 0 && Number.isFinite(eta.p50Ms)) {
      let best: Eta["hint"];
      for (const alt of alternatives) {
        const list = simulated.map((x) => (x.key === r.key ? { ...alt.request, key: r.key } : x));
        if (!list.some((x) => x.key === r.key) || !lengths.known(alt.request.gpuModel)) continue;
        const altInput = reshaped(input, r.key, alt.request);
        if (neverReason(altInput, { ...alt.request, key: r.key })) continue;
        const altEta = fromSamples(r.key, asOf, reason, now, runs(list, altInput));
        const gain = eta.p50Ms - altEta.p50Ms;
        if (gain >= HINT_MIN_GAIN && altEta.p50Ms <= 0.8 * eta.p50Ms && (!best || altEta.p50Ms < best.p50Ms))
          best = {
            label: alt.label,
            p50Ms: altEta.p50Ms,
            message: `${alt.label} would likely start in ${minutes(altEta.p50Ms)} instead of ${minutes(eta.p50Ms)}`,
          };
      }
      if (best) eta.hint = best;
    }
    out.push(eta);
  }
  return out;
};

/** The input with one waiting session's fair-share size made that of another shape (a slice: its cores share). */
function reshaped(input: EtaInput, key: string, shape: PlacementRequest): EtaInput {
  const side = input.fairShare?.sessions[key];
  if (!input.fairShare || !side) return input;
  const cards = shape.slice ? Math.min(1, shape.slice.cores / 100) : shape.gpuCount;
  return {
    ...input,
    fairShare: { ...input.fairShare, sessions: { ...input.fairShare.sessions, [key]: { ...side, cards } } },
  };
}
