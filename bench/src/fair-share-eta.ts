// How right the queue ETA is (docs/dev/fair-share.md), on a simulated trace, side by side with three
// baselines in one run. Not a test: it prints figures.
//
// The trace: a fleet of 2 clusters × 4 nodes × 8 H100 (64 GPUs) run by the real placement (planPlacement,
// binpack, strict queue); Poisson arrivals with a daily cycle (rate × (1 + 0.5 sin)), sizes 1/2/4 GPUs
// (60/25/15 %) from three organizations with different mixes; lognormal lengths (median 60 min, σ 1.0)
// capped by an 8-hour time limit. The arrival rate is set for a mean utilisation of 50, 80 or 95 %.
//
// At each arrival that does not start at once, every estimator predicts its start from the state at that
// moment only (the running sessions and their start times, the queue, finished runs so far, recent starts):
//   - berth:       estimateQueue (forward simulation of planPlacement over learned lengths, Monte Carlo;
//                  by default a lognormal fitted to the finished runs and, censored, the running ones)
//   - berth, empirical: the same drawing finished lengths widened by a kernel (lengthFit "empirical",
//                  the default before the censored fit)
//   - berth, true length law: the fit handed the trace's own law (an oracle: no length model does better)
//   - gShare:      position × median of the last ≤ 100 waits (of sessions that did wait: counting the
//                  instant ones' zeros too would make it predict 0 nearly always, an easier baseline)
//   - depth÷rate:  position ÷ admissions in the last hour
//   - Slurm-style: the same forward plan with every run lasting its time limit (squeue --start)
// Then the trace goes on and the actual start is recorded. The first half day is warm-up (history fills).
// Tuning: berth's length-history window is chosen on the tuning seed at every utilisation (calibration,
// then error), and the figures are reported on the other seeds. Instant admissions are counted apart.
//
// With --order=fair the trace's queue goes by fair share's score (weights physics 2 : biology 1 : nlp 1,
// decayed usage, aging), so a lighter organization's new request overtakes older ones; the estimators get
// that order, and one more row adds the arrivals expected to rank ahead (per organization, its last 6
// hours' rate and sizes, scored as a request made now: what the API passes).
//
//   node bench/src/fair-share-eta.ts [--days=2] [--seeds=2,3] [--tune-seed=1] [--windows=100,500,1000]
//     [--kernel=0.6] [--utilisations=50,80,95] [--samples=48] [--order=fifo|fair] [--quick]
//     (quick: 1.5 days, seed 2, window 500 (what the API reads), no tuning; --kernel: the empirical row's)
import { cpus, loadavg, totalmem } from "node:os";
import { parseArgs } from "node:util";
import {
  type ClusterCapacity,
  decayedUsage,
  type EtaArrivals,
  type EtaRunning,
  estimateQueue,
  type FairRequest,
  fairComparator,
  type LengthSample,
  type PlacementRequest,
  planPlacement,
  resolveSettings,
  type ShareTree,
  scoreRequests,
  type UsageInterval,
} from "@berth/controllers";
import { type Prediction, pctf, score, type TraceResult, tableRow } from "./fair-share-eta/score.ts";
import {
  arrivals,
  CAPACITY,
  DAY,
  H100,
  iso,
  MAX_RUNTIME,
  MIN,
  ORGS,
  type Session,
  TRUE_LAW,
  trueRate,
} from "./fair-share-eta/trace.ts";
import { lowerMedian } from "./kit/median.ts";

const { values } = parseArgs({
  options: {
    days: { type: "string", default: "2" },
    seeds: { type: "string", default: "2,3" },
    "tune-seed": { type: "string", default: "1" },
    samples: { type: "string" },
    utilisations: { type: "string", default: "50,80,95" },
    windows: { type: "string", default: "100,500,1000" },
    kernel: { type: "string", default: "0.6" },
    quick: { type: "boolean", default: false },
    order: { type: "string", default: "fifo" },
  },
});
/** fifo: the trace's queue by age; fair: by fair share's score (usage against weight 2:1:1, aging). */
const FAIR = values.order === "fair";
const QUICK = values.quick;
const DAYS = QUICK ? 1.5 : Number(values.days);
const SEEDS = (QUICK ? "2" : values.seeds).split(",").map(Number);
const TUNE_SEED = Number(values["tune-seed"]);
/** Monte Carlo samples; estimateQueue's default when not given. */
const SAMPLES = values.samples === undefined ? undefined : Number(values.samples);
const UTILS = values.utilisations.split(",").map((u) => Number(u) / 100);
/** The empirical row's kernel σ (its default before the censored fit). */
const KERNEL = Number(values.kernel);

const WARMUP = 0.5 * DAY;
const TREE: ShareTree = { orgs: [{ org: "physics", weight: 2 }, { org: "biology" }, { org: "nlp" }] };
const SETTINGS = resolveSettings();
/** Recent arrivals per organization, for the expected arrivals' rates and shapes. */
const ARRIVAL_WINDOW = 6 * 60 * MIN;

console.log(
  `machine: ${cpus().length} CPUs, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);

function clustersOf(running: Session[]): ClusterCapacity[] {
  return ["gpu-a", "gpu-b"].map((id) => {
    const used = running.filter((s) => s.cluster === id).reduce((x, s) => x + s.gpus, 0);
    return { clusterId: id, placeable: true, models: { [H100]: { total: 32, free: 32 - used, largestNode: 8 } } };
  });
}

const requestOf = (s: Session): PlacementRequest => ({
  key: s.key,
  gpuModel: H100,
  gpuCount: s.gpus,
  priority: 0,
  since: iso(s.arrival),
  volumes: [],
});

/** Runs the trace with the real placement, predicting at each queued arrival. */
function run(seed: number, utilisation: number, historyWindow: number, predict: boolean): TraceResult {
  const { sessions, baseRate } = arrivals(seed, utilisation, DAYS);
  let queue: Session[] = [];
  let running: Session[] = [];
  const finished: LengthSample[] = [];
  const starts: number[] = [];
  const waits: number[] = [];
  const predictions: Prediction[] = [];
  const estimateMs: number[] = [];
  let instant = 0;
  let overtakes = 0;
  let measured = 0;
  let next = 0;
  let t = 0;
  const started: Session[] = [];
  const fairOf = (s: Session): FairRequest => ({
    ...requestOf(s),
    org: s.org,
    project: "",
    user: s.org,
    cards: s.gpus,
    mayBorrow: false,
  });
  const usageAt = () =>
    decayedUsage(
      started.map(
        (x): UsageInterval => ({
          org: x.org,
          project: "",
          user: x.org,
          cards: x.gpus,
          start: iso(x.start as number),
          ...((x.start as number) + x.length <= t ? { end: iso((x.start as number) + x.length) } : {}),
        }),
      ),
      iso(t),
      SETTINGS.halfLifeMs,
    );
  const scoresOf = (list: Session[], usage = usageAt()) =>
    scoreRequests(TREE, usage, list.map(fairOf), iso(t), SETTINGS);
  const place = () => {
    const plan = planPlacement({
      requests: queue.map(requestOf),
      clusters: clustersOf(running),
      policy: "binpack",
      ...(FAIR ? { compare: fairComparator(scoresOf(queue)) } : {}),
    });
    if (plan.placed.length === 0) return new Set<string>();
    const placed = new Map(plan.placed.map((p) => [p.key, p.clusterId]));
    for (const s of queue)
      if (placed.has(s.key)) {
        s.start = t;
        s.cluster = placed.get(s.key) as string;
        running.push(s);
        started.push(s);
        starts.push(t);
        if (t > s.arrival) waits.push(t - s.arrival);
      }
    queue = queue.filter((s) => !placed.has(s.key));
    if (t >= WARMUP) {
      const oldest = Math.min(...queue.map((q) => q.arrival));
      for (const s of running) if (s.start === t && placed.has(s.key) && s.arrival > oldest) overtakes++;
    }
    return new Set(placed.keys());
  };
  while (next < sessions.length || queue.length > 0) {
    const nextArrival = sessions[next]?.arrival ?? Number.POSITIVE_INFINITY;
    let nextEnd = Number.POSITIVE_INFINITY;
    for (const s of running) nextEnd = Math.min(nextEnd, (s.start as number) + s.length);
    if (!Number.isFinite(nextArrival) && !Number.isFinite(nextEnd)) break;
    if (nextEnd <= nextArrival) {
      t = nextEnd;
      const ended = running.filter((s) => (s.start as number) + s.length <= t);
      running = running.filter((s) => (s.start as number) + s.length > t);
      for (const s of ended) finished.push({ gpuModel: H100, cards: s.gpus, lengthMs: s.length, endedAt: iso(t) });
      place();
      continue;
    }
    t = nextArrival;
    const s = sessions[next++] as Session;
    queue.push(s);
    const placedNow = place();
    if (t < WARMUP || !predict) continue;
    measured++;
    if (placedNow.has(s.key)) {
      instant++;
      continue;
    }
    const position = queue.findIndex((q) => q.key === s.key) + 1;
    const history = finished.slice(-historyWindow);
    const recentStarts = starts.filter((x) => x > t - 6 * 60 * MIN).map(iso);
    const runningView: EtaRunning[] = running.map((r) => ({
      key: r.key,
      clusterId: r.cluster as string,
      gpuModel: H100,
      gpuCount: r.gpus,
      startedAt: iso(r.start as number),
      maxRuntimeMs: MAX_RUNTIME,
    }));
    let arrivals: EtaArrivals | undefined;
    let compare: ((a: PlacementRequest, b: PlacementRequest) => number) | undefined;
    if (FAIR) {
      // The queue's order now, and per organization its recent arrival rate, sizes and a new request's score.
      const usage = usageAt();
      const scores = scoresOf(queue, usage);
      compare = fairComparator(scores);
      const recent = sessions.slice(0, next).filter((x) => x.arrival > t - ARRIVAL_WINDOW);
      const span = Math.min(ARRIVAL_WINDOW, t);
      arrivals = {
        scores: Object.fromEntries(scores.map((x) => [x.key, x.score])),
        agingPerMs: SETTINGS.agingPerMinute / MIN,
        streams: ORGS.map(({ org }) => {
          const mine = recent.filter((x) => x.org === org);
          const probe = { ...(sessions[0] as Session), key: `probe/${org}`, org, arrival: t };
          return {
            ratePerMs: mine.length / span,
            score: (scoresOf([probe], usage)[0] as { score: number }).score,
            shapes: mine.map((x) => {
              const { key: _, since: __, ...shape } = requestOf(x);
              return shape;
            }),
          };
        }),
      };
    }
    const base = {
      now: iso(t),
      waiting: queue.map(requestOf),
      running: runningView,
      clusters: clustersOf(running),
      policy: "binpack" as const,
      history,
      recentStarts,
      ...(SAMPLES !== undefined ? { samples: SAMPLES } : {}),
      seed: next,
      maxRuntimeMs: Object.fromEntries(queue.map((q) => [q.key, MAX_RUNTIME])),
      ...(compare ? { compare } : {}),
    };
    const c0 = performance.now();
    const berth = estimateQueue(base).find((e) => e.key === s.key);
    estimateMs.push(performance.now() - c0);
    const empirical = estimateQueue({ ...base, lengthFit: "empirical", lengthKernel: KERNEL }).find(
      (e) => e.key === s.key,
    );
    const oracle = estimateQueue({ ...base, history: TRUE_LAW, lengthFit: "lognormal" }).find((e) => e.key === s.key);
    const band = (e: typeof berth) => ({
      p10: e?.p10Ms ?? Number.NaN,
      p50: e?.p50Ms ?? Number.NaN,
      p90: e?.p90Ms ?? Number.NaN,
    });
    const slurm = estimateQueue({ ...base, lengths: "max", samples: 1 }).find((e) => e.key === s.key);
    const ahead = arrivals ? estimateQueue({ ...base, arrivals }).find((e) => e.key === s.key) : undefined;
    const oracleAhead = arrivals
      ? estimateQueue({ ...base, arrivals, history: TRUE_LAW, lengthFit: "lognormal" }).find((e) => e.key === s.key)
      : undefined;
    const rateAhead = arrivals
      ? estimateQueue({
          ...base,
          arrivals: {
            ...arrivals,
            streams: arrivals.streams.map((st, i) => ({
              ...st,
              ratePerMs: trueRate(baseRate, (ORGS[i] as { org: string }).org, t),
            })),
          },
        }).find((e) => e.key === s.key)
      : undefined;
    const ordered = compare ? [...queue].sort((a, b) => compare(requestOf(a), requestOf(b))) : queue;
    const rank = ordered.findIndex((q) => q.key === s.key);
    const lastHour = starts.filter((x) => x > t - 60 * MIN).length;
    predictions.push({
      key: s.key,
      at: t,
      position,
      berth: {
        p10: berth?.p10Ms ?? Number.NaN,
        p50: berth?.p50Ms ?? Number.NaN,
        p90: berth?.p90Ms ?? Number.NaN,
        method: berth?.method ?? "none",
      },
      empirical: band(empirical),
      oracle: band(oracle),
      ...(ahead ? { arrivals: band(ahead) } : {}),
      ...(oracleAhead ? { oracleArrivals: band(oracleAhead) } : {}),
      ...(rateAhead ? { rateArrivals: band(rateAhead) } : {}),
      rank: rank + 1,
      ahead: ordered.slice(0, rank).map((q) => q.key),
      behind: ordered.slice(rank + 1).map((q) => q.key),
      gshare: position * lowerMedian(waits.slice(-100)),
      depth: lastHour > 0 ? (position / lastHour) * 60 * MIN : Number.POSITIVE_INFINITY,
      slurm: slurm?.p50Ms ?? Number.NaN,
    });
  }
  return { sessions, predictions, instant, measured, estimateMs, overtakes };
}

// Tuning: the history window, on the tuning seed at each utilisation.
const WINDOWS = QUICK ? [500] : values.windows.split(",").map(Number);
let window = WINDOWS[0] ?? 500;
if (WINDOWS.length > 1) {
  console.log(`\ntuning on seed ${TUNE_SEED}: history window (finished runs kept)`);
  let best = Number.POSITIVE_INFINITY;
  for (const w of WINDOWS) {
    let loss = 0;
    const parts: string[] = [];
    for (const util of UTILS) {
      const s = score(
        run(TUNE_SEED, util, w, true),
        (p) => p.berth.p50,
        (p) => p.berth,
      );
      // p90 coverage nearest 90 %, then the median error.
      loss += Math.abs((s.belowP90 ?? 0) - 0.9) * 10 + s.relLong;
      parts.push(
        `${Math.round(util * 100)} %: ≤ p90 ${pctf(s.belowP90)}, in band ${pctf(s.inBand)}, rel (>5 min) ${pctf(s.relLong)}`,
      );
    }
    console.log(`  window ${w}: ${parts.join("; ")}`);
    if (loss < best) {
      best = loss;
      window = w;
    }
  }
  console.log(`  chosen: window ${window}`);
}

for (const util of UTILS) {
  for (const seed of SEEDS) {
    const c0 = process.cpuUsage();
    const r = run(seed, util, window, true);
    const cpu = process.cpuUsage(c0);
    const rows = {
      [`berth (${window} runs, censored lognormal fit)`]: score(
        r,
        (p) => p.berth.p50,
        (p) => p.berth,
      ),
      [`berth, empirical (kernel σ ${KERNEL})`]: score(
        r,
        (p) => p.empirical.p50,
        (p) => p.empirical,
      ),
      "berth, true length law (oracle)": score(
        r,
        (p) => p.oracle.p50,
        (p) => p.oracle,
      ),
      ...(FAIR
        ? {
            "berth + expected arrivals ahead": score(
              r,
              (p) => p.arrivals?.p50 ?? Number.NaN,
              (p) => p.arrivals ?? { p10: Number.NaN, p90: Number.NaN },
            ),
            "berth + arrivals at the true rate (oracle)": score(
              r,
              (p) => p.rateArrivals?.p50 ?? Number.NaN,
              (p) => p.rateArrivals ?? { p10: Number.NaN, p90: Number.NaN },
            ),
            "berth + arrivals, true length law (oracle)": score(
              r,
              (p) => p.oracleArrivals?.p50 ?? Number.NaN,
              (p) => p.oracleArrivals ?? { p10: Number.NaN, p90: Number.NaN },
            ),
          }
        : {}),
      "gShare (position × median wait)": score(r, (p) => p.gshare),
      "depth ÷ last hour's admissions": score(r, (p) => p.depth),
      "Slurm-style (max length plan)": score(r, (p) => p.slurm),
    };
    const started = r.sessions.filter((s) => s.start !== undefined);
    const gpuMin = started.reduce((x, s) => x + s.gpus * s.length, 0);
    const fallback = r.predictions.filter((p) => p.berth.method !== "simulation").length;
    console.log(
      `\nutilisation ${Math.round(util * 100)} % (offered; ${pctf(gpuMin / (CAPACITY * DAYS * DAY))} GPU-time used), seed ${seed}: ${r.measured} arrivals measured, ${r.instant} instant (${pctf(r.instant / Math.max(1, r.measured))}), ${r.predictions.length} queued, ${r.overtakes} started ahead of an earlier arrival; berth estimate p50 ${lowerMedian(r.estimateMs).toFixed(1)} ms, fallback used ${fallback}×; trace CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s`,
    );
    console.table(Object.fromEntries(Object.entries(rows).map(([k, s]) => [k, tableRow(s)])));
    // The error by place in line: first in line, the wait is the first end among the running sessions (its
    // spread is of the order of the wait itself); deeper, it is a sum of many and relatively narrower.
    const parts = [
      [1, 2],
      [3, 5],
      [6, Number.POSITIVE_INFINITY],
    ].map(([lo, hi]) => {
      const sub = {
        ...r,
        predictions: r.predictions.filter((p) => p.position >= (lo as number) && p.position <= (hi as number)),
      };
      const b = score(sub, (p) => p.berth.p50);
      const o = score(sub, (p) => p.oracle.p50);
      return `${lo}${hi === Number.POSITIVE_INFINITY ? "+" : `–${hi}`}: ${pctf(b.relLong)} / ${pctf(o.relLong)} (n=${b.nLong})`;
    });
    console.log(`rel err (wait > 5 min) by place in line at arrival, berth / oracle: ${parts.join("; ")}`);
    if (FAIR) breakdown(r);
  }
}

/**
 * Where the error of the row with arrivals is (--order=fair): by place in the queue's order at arrival, by
 * whether a later arrival started first (what the expected arrivals model), and by whether the order among
 * those already waiting changed (one behind started first, or one ahead started later: usage moved the
 * scores while they waited). Each bucket: berth / oracle lengths, both with arrivals, and berth's bias.
 */
function breakdown(r: TraceResult): void {
  const bySession = new Map(r.sessions.map((s) => [s.key, s]));
  const startOf = (k: string) => bySession.get(k)?.start ?? Number.POSITIVE_INFINITY;
  const later = (p: Prediction) => {
    const mine = startOf(p.key);
    return r.sessions.filter((x) => x.arrival > p.at && x.start !== undefined && x.start < mine).length;
  };
  const reordered = (p: Prediction) => {
    const mine = startOf(p.key);
    return p.behind.filter((k) => startOf(k) < mine).length + p.ahead.filter((k) => startOf(k) > mine).length;
  };
  const line = (label: string, keep: (p: Prediction) => boolean) => {
    const sub = { ...r, predictions: r.predictions.filter(keep) };
    const b = score(
      sub,
      (p) => p.arrivals?.p50 ?? Number.NaN,
      (p) => p.arrivals ?? { p10: Number.NaN, p90: Number.NaN },
    );
    const o = score(sub, (p) => p.oracleArrivals?.p50 ?? Number.NaN);
    return `${label}: ${pctf(b.relLong)} / ${pctf(o.relLong)}, bias ${b.biasMin.toFixed(1)} min, ≤ p90 ${pctf(b.belowP90)} (n=${b.nLong}/${b.n})`;
  };
  console.log("with arrivals, rel err (wait > 5 min) berth / oracle lengths, berth's bias and ≤ p90:");
  console.log(
    `  by rank at arrival: ${[line("1–2", (p) => p.rank <= 2), line("3–5", (p) => p.rank >= 3 && p.rank <= 5), line("6+", (p) => p.rank >= 6)].join("; ")}`,
  );
  console.log(
    `  later arrivals started first: ${[line("none", (p) => later(p) === 0), line("1–2", (p) => later(p) >= 1 && later(p) <= 2), line("3+", (p) => later(p) >= 3)].join("; ")}`,
  );
  console.log(
    `  order among the waiting changed: ${[line("no", (p) => reordered(p) === 0), line("yes", (p) => reordered(p) > 0)].join("; ")}`,
  );
}
