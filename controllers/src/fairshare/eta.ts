// The queue ETA: the real placement (planPlacement, after fair share's admission when it is on) replayed
// forward from the state now, with session lengths drawn from finished runs, a few times over (Monte Carlo)
// for p10/p50/p90 (docs/dev/fair-share.md). Pure and deterministic for a seed.
import type { InventoryNodeView } from "../placement/capacity.ts";
import { type CardHolding, CardPool } from "../placement/cards.ts";
import { DEFAULT_CONSTRAINTS } from "../placement/constraints.ts";
import { compareRequests, planPlacement } from "../placement/plan.ts";
import type { ClusterCapacity, PlacementRequest, Waiting } from "../placement/types.ts";
import { admitRequests, classifyWith, fairRequestOf, fleetCapacity, guaranteedFirst, HeldTally } from "./shares.ts";
import type {
  Classification,
  ClusterEta,
  EstimateQueueFn,
  Eta,
  EtaArrivals,
  EtaInput,
  EtaRunning,
  EtaShare,
  LengthSample,
  ShareTree,
} from "./types.ts";

const MIN = 60_000;
/** Monte Carlo samples: at 24 the p90 (an order statistic of few) fell inside too many actual starts. */
const DEFAULT_SAMPLES = 48;
const DEFAULT_MIN_HISTORY = 20;
/** σ (log space) of the lognormal kernel around each finished length when lengths are drawn as seen. */
const DEFAULT_KERNEL = 0.6;
const DEFAULT_HORIZON = 7 * 24 * 60 * MIN;
/** The fallback's window of recent admissions. */
const RATE_WINDOW = 6 * 60 * MIN;
/**
 * Arrivals are expected this far ahead at most: their rate is of the last hours, and a request refused for
 * long would otherwise see a day's worth of them queued (each step of the simulation walks the queue).
 */
const ARRIVALS_AHEAD = 24 * 60 * MIN;
/** A hint needs the alternative to start this much sooner (and by a fifth at least). */
const HINT_MIN_GAIN = 5 * MIN;

/** mulberry32: a small seeded generator, the same draws on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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
class Lengths {
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

/** P(Z > z), Z standard normal (erfc by a Chebyshev fit, |error| < 1.2e-7). */
function upperTail(z: number): number {
  if (z === Number.NEGATIVE_INFINITY) return 1;
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * x);
  const erfc =
    t *
    Math.exp(
      -x * x -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return z >= 0 ? erfc / 2 : 1 - erfc / 2;
}

/** The standard normal quantile (P. J. Acklam's rational approximation; relative error < 1.2e-9). */
function normalQuantile(p: number): number {
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239,
  ];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const [a0, a1, a2, a3, a4, a5] = a as [number, number, number, number, number, number];
  const [b0, b1, b2, b3, b4] = b as [number, number, number, number, number];
  const [c0, c1, c2, c3, c4, c5] = c as [number, number, number, number, number, number];
  const [d0, d1, d2, d3] = d as [number, number, number, number];
  const low = 0.02425;
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c0 * q + c1) * q + c2) * q + c3) * q + c4) * q + c5) / ((((d0 * q + d1) * q + d2) * q + d3) * q + 1);
  }
  if (p > 1 - low) {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    return -(((((c0 * q + c1) * q + c2) * q + c3) * q + c4) * q + c5) / ((((d0 * q + d1) * q + d2) * q + d3) * q + 1);
  }
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a0 * r + a1) * r + a2) * r + a3) * r + a4) * r + a5) * q) /
    (((((b0 * r + b1) * r + b2) * r + b3) * r + b4) * r + 1)
  );
}

/** A standard normal draw (Box–Muller). */
function normal(rand: () => number): number {
  const u = 1 - rand(); // (0, 1]: log(0) is not a number
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

function push(m: Map<string, number[]>, k: string, v: number): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.POSITIVE_INFINITY;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))));
  return sorted[i] as number;
}

interface SimRunning {
  key: string;
  clusterId: string;
  gpuModel: string;
  gpuCount: number;
  slice?: { memoryMib: number; cores: number };
  assignment?: { node: string; cards: string[] };
  end: number;
}

interface SimResult {
  /** Start time (ms since epoch) and cluster per key; absent: not started within the horizon. */
  starts: Map<string, { at: number; clusterId: string }>;
}

/** The end of a session that has run `elapsed` already: a length from those longer, capped by its limits. */
function endOf(
  r: EtaRunning,
  now: number,
  lengths: Lengths,
  mode: "history" | "max",
  rand: () => number,
  cardsOf: (r: { gpuCount: number; slice?: unknown }) => number,
): number {
  const start = Date.parse(r.startedAt);
  let end: number;
  const pool = lengths.of(r.gpuModel, cardsOf(r));
  if (mode === "max")
    end = start + (r.maxRuntimeMs ?? (pool.length ? (pool[pool.length - 1] as number) : DEFAULT_HORIZON));
  else {
    const elapsed = now - start;
    // Lengths longer than what it has run: the first index past `elapsed` (pool is sorted).
    let lo = 0;
    let hi = pool.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((pool[mid] as number) <= elapsed) lo = mid + 1;
      else hi = mid;
    }
    const drawn = pool.length > 0 ? lengths.draw(pool, lo, elapsed, rand) : Number.NaN;
    if (!Number.isNaN(drawn)) end = start + drawn;
    else end = r.maxRuntimeMs !== undefined ? start + r.maxRuntimeMs : now + quantile(pool, 0.5);
  }
  if (r.maxRuntimeMs !== undefined) end = Math.min(end, start + r.maxRuntimeMs);
  if (r.idleSince !== undefined && r.idleTimeoutMs !== undefined)
    end = Math.min(end, Date.parse(r.idleSince) + r.idleTimeoutMs);
  return Math.max(end, now + 1);
}

type Compare = (a: PlacementRequest, b: PlacementRequest) => number;

/**
 * Fair share's admission of `pending` (in queue order) against what `holding` holds, as the worker's pass
 * applies it (admitRequests): the requests that may take room, placement's order among them, and the
 * refused ones with their classification. Without fair share every request is admitted in `compare`'s order.
 */
function admission(
  fair: { tree: ShareTree; sessions: Readonly<Record<string, EtaShare>> } | undefined,
  capacity: Record<string, number>,
  pending: readonly PlacementRequest[],
  holding: readonly { key: string; gpuModel: string }[],
  compare: Compare,
): {
  admitted: readonly PlacementRequest[];
  compare: Compare;
  refused: Map<string, Extract<Classification, { kind: "refused" }>>;
} {
  const refused = new Map<string, Extract<Classification, { kind: "refused" }>>();
  if (!fair) return { admitted: pending, compare, refused };
  const tally = new HeldTally();
  for (const h of holding) {
    const side = fair.sessions[h.key];
    if (side) tally.add({ ...side, gpuModel: h.gpuModel });
  }
  const ordered = pending.flatMap((r) => {
    const side = fair.sessions[r.key];
    return side ? [fairRequestOf(r, side)] : [];
  });
  const classes = admitRequests(fair.tree, tally, ordered, capacity);
  for (const [key, c] of Object.entries(classes)) if (c.kind === "refused") refused.set(key, c);
  return {
    admitted: refused.size > 0 ? pending.filter((r) => !refused.has(r.key)) : pending,
    compare: guaranteedFirst(classes, compare),
    refused,
  };
}

function simulate(
  input: EtaInput,
  waiting: readonly PlacementRequest[],
  lengths: Lengths,
  rand: () => number,
): SimResult {
  const now = Date.parse(input.now);
  const horizon = now + (input.horizonMs ?? DEFAULT_HORIZON);
  const mode = input.lengths ?? "history";
  const constraints = input.constraints ?? DEFAULT_CONSTRAINTS;
  const compare = input.compare ?? compareRequests;
  const cardsOf = (r: { gpuCount: number; slice?: unknown }) => (r.slice ? 0.5 : r.gpuCount);
  const nodes = input.nodes ? emptied(input.nodes) : undefined;
  const capacity = fleetCapacity(input.clusters);

  const free = new Map<string, number>();
  const slot = (cluster: string, model: string) => `${model}@${cluster}`;
  for (const c of input.clusters)
    for (const [model, m] of Object.entries(c.models)) free.set(slot(c.clusterId, model), Math.max(0, m.free));
  let running: SimRunning[] = input.running.map((r) => ({
    key: r.key,
    clusterId: r.clusterId,
    gpuModel: r.gpuModel,
    gpuCount: r.gpuCount,
    ...(r.slice ? { slice: r.slice } : {}),
    ...(r.assignment ? { assignment: r.assignment } : {}),
    end: endOf(r, now, lengths, mode, rand, cardsOf),
  }));
  let pending = [...waiting];
  const starts: SimResult["starts"] = new Map();
  let t = now;
  // Expected arrivals that rank ahead (input.arrivals): each gets a reference score, the score it would
  // have at `now` had it waited since (aging is the same for all, so order at any time is by this).
  const arrivals = input.arrivals;
  const refScore = new Map<string, number>(Object.entries(arrivals?.scores ?? {}));
  const synthetic = new Set<string>();
  let order = compare;
  if (arrivals)
    order = (a, b) => {
      if (!synthetic.has(a.key) && !synthetic.has(b.key)) return compare(a, b);
      if (a.priority !== b.priority) return b.priority - a.priority;
      const d = (refScore.get(b.key) ?? Number.NEGATIVE_INFINITY) - (refScore.get(a.key) ?? Number.NEGATIVE_INFINITY);
      return d || Date.parse(a.since) - Date.parse(b.since) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
    };
  const gap = (from: number, rate: number) => {
    const at = rate > 0 ? from - Math.log(1 - rand()) / rate : Number.POSITIVE_INFINITY;
    return at <= now + ARRIVALS_AHEAD ? at : Number.POSITIVE_INFINITY;
  };
  const nextArrival = (arrivals?.streams ?? []).map((st) => gap(now, st.ratePerMs));
  let arrived = 0;
  let realLeft = pending.length;
  while (realLeft > 0 && t <= horizon) {
    const clusters: ClusterCapacity[] = input.clusters.map((c) => ({
      ...c,
      models: Object.fromEntries(
        Object.entries(c.models).map(([model, m]) => [model, { ...m, free: free.get(slot(c.clusterId, model)) ?? 0 }]),
      ),
    }));
    const cards = nodes
      ? new CardPool(
          nodes,
          running.flatMap((r): CardHolding[] =>
            r.assignment
              ? [
                  {
                    clusterId: r.clusterId,
                    node: r.assignment.node,
                    cards: r.assignment.cards,
                    ...(r.slice ? { slice: r.slice } : {}),
                  },
                ]
              : [],
          ),
        )
      : undefined;
    // A request fair share refuses waits, GPUs free or not, until holders end (the worker's rule).
    const admitted = admission(input.fairShare, capacity, pending, running, order);
    const plan = planPlacement({
      requests: admitted.admitted,
      clusters,
      policy: input.policy,
      constraints,
      ...(cards ? { cards } : {}),
      compare: admitted.compare,
    });
    if (plan.placed.length > 0) {
      const byKey = new Map(pending.map((r) => [r.key, r]));
      for (const p of plan.placed) {
        const r = byKey.get(p.key) as PlacementRequest;
        starts.set(r.key, { at: t, clusterId: p.clusterId });
        const limit = input.maxRuntimeMs?.[r.key];
        const end = endOf(
          {
            key: r.key,
            clusterId: p.clusterId,
            gpuModel: r.gpuModel,
            gpuCount: r.gpuCount,
            startedAt: new Date(t).toISOString(),
            ...(limit !== undefined ? { maxRuntimeMs: limit } : {}),
          },
          t,
          lengths,
          mode,
          rand,
          cardsOf,
        );
        running.push({
          key: r.key,
          clusterId: p.clusterId,
          gpuModel: r.gpuModel,
          gpuCount: r.gpuCount,
          ...(r.slice ? { slice: r.slice } : {}),
          ...(p.assignment ? { assignment: p.assignment } : {}),
          end,
        });
        if (!r.slice)
          free.set(slot(p.clusterId, r.gpuModel), (free.get(slot(p.clusterId, r.gpuModel)) ?? 0) - r.gpuCount);
      }
      const placed = new Set(plan.placed.map((p) => p.key));
      pending = pending.filter((r) => !placed.has(r.key));
      for (const k of placed) if (!synthetic.has(k)) realLeft--;
      if (realLeft === 0) break;
    }
    // Next: the earliest end or expected arrival; everything ending then gives its room back.
    let next = Number.POSITIVE_INFINITY;
    for (const r of running) if (r.end < next) next = r.end;
    for (const a of nextArrival) if (a < next) next = a;
    if (!Number.isFinite(next)) break;
    t = next;
    (arrivals?.streams ?? []).forEach((st, i) => {
      if ((nextArrival[i] as number) > t) return;
      nextArrival[i] = gap(t, st.ratePerMs);
      const shape = st.shapes[Math.floor(rand() * st.shapes.length)];
      // A model without learned lengths would hold its room for ever here.
      if (!shape || !lengths.known(shape.gpuModel)) return;
      const req: PlacementRequest = { ...shape, key: `~arrival/${arrived++}`, since: new Date(t).toISOString() };
      refScore.set(req.key, st.score - (arrivals as EtaArrivals).agingPerMs * (t - now));
      synthetic.add(req.key);
      // Only one ranking ahead of a real waiting request can change an estimate.
      if (pending.some((r) => !synthetic.has(r.key) && order(req, r) < 0)) {
        pending.push(req);
        pending.sort(order);
      }
    });
    const still: SimRunning[] = [];
    for (const r of running) {
      if (r.end > t) still.push(r);
      else if (!r.slice)
        free.set(slot(r.clusterId, r.gpuModel), (free.get(slot(r.clusterId, r.gpuModel)) ?? 0) + r.gpuCount);
    }
    running = still;
  }
  return { starts };
}

/** Nodes with their cards' usage cleared: in the simulation what holds a card is the simulated sessions. */
function emptied(nodes: readonly InventoryNodeView[]): InventoryNodeView[] {
  return nodes.map((n) => ({
    ...n,
    gpuInUse: 0,
    ...(n.cards ? { cards: n.cards.map((c) => ({ ...c, memoryUsedMib: 0, coresUsed: 0, vgpusUsed: 0 })) } : {}),
  }));
}

/**
 * Why the request can never start as things are: fair share refuses it with nothing held (a borrowing
 * limit below its size, nothing lendable to it), or the plan on an empty fleet still leaves it waiting.
 */
function neverReason(input: EtaInput, req: PlacementRequest): Waiting | undefined {
  const side = input.fairShare?.sessions[req.key];
  if (input.fairShare && side) {
    const c = classifyWith(
      input.fairShare.tree,
      new HeldTally(),
      fairRequestOf(req, side),
      fleetCapacity(input.clusters),
    );
    if (c.kind === "refused") return { key: req.key, position: 0, reason: c.reason, message: c.message };
  }
  const clusters = input.clusters.map((c) => ({
    ...c,
    models: Object.fromEntries(Object.entries(c.models).map(([model, m]) => [model, { ...m, free: m.total }])),
  }));
  const plan = planPlacement({
    requests: [req],
    clusters,
    policy: input.policy,
    constraints: input.constraints ?? DEFAULT_CONSTRAINTS,
    ...(input.nodes ? { cards: new CardPool(emptied(input.nodes), []) } : {}),
  });
  return plan.waiting[0];
}

function minutes(ms: number): string {
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
  const admittedNow = admission(input.fairShare, fleetCapacity(input.clusters), waiting, input.running, compare);
  const current = planPlacement({
    requests: admittedNow.admitted,
    clusters: input.clusters,
    policy: input.policy,
    constraints: input.constraints ?? DEFAULT_CONSTRAINTS,
    ...(input.nodes ? { cards: new CardPool(input.nodes, cardHoldings(input.running)) } : {}),
    compare: admittedNow.compare,
  });
  const nowWaiting = new Map(current.waiting.map((w) => [w.key, w]));
  if (admittedNow.refused.size > 0) {
    // Positions per model over everything that waits, refused or not, in queue order (as planFairPass).
    for (const [key, c] of admittedNow.refused)
      nowWaiting.set(key, { key, position: 0, reason: c.reason, message: c.message });
    const positions = new Map<string, number>();
    for (const r of waiting) {
      const w = nowWaiting.get(r.key);
      if (!w) continue;
      const position = (positions.get(r.gpuModel) ?? 0) + 1;
      positions.set(r.gpuModel, position);
      nowWaiting.set(r.key, { ...w, position });
    }
  }
  const nowPlaced = new Set(current.placed.map((p) => p.key));

  // Requests that can never start are left out of the simulation (they would block their lane in it,
  // as they do not in a fleet that changes).
  const never = new Map<string, Waiting>();
  for (const r of waiting) {
    if (nowPlaced.has(r.key)) continue;
    const w = neverReason(input, r);
    if (w) never.set(r.key, w);
  }
  const simulated = waiting.filter((r) => !never.has(r.key) && lengths.known(r.gpuModel));

  const samples = input.samples ?? DEFAULT_SAMPLES;
  const runs = (list: readonly PlacementRequest[], from: EtaInput = input) => {
    const rand = seededRandom(input.seed ?? 1);
    return Array.from({ length: samples }, () => simulate(from, list, lengths, rand));
  };
  const sims = simulated.length > 0 ? runs(simulated) : [];

  const recent = input.recentStarts.map((s) => Date.parse(s)).filter((s) => s <= now && s > now - RATE_WINDOW);
  const span = Math.max(15 * MIN, now - Math.min(now, ...recent));
  const rate = recent.length / span;

  const out: Eta[] = [];
  for (const r of waiting) {
    const asOf = input.now;
    if (nowPlaced.has(r.key)) {
      out.push({
        key: r.key,
        asOf,
        p10Ms: 0,
        p50Ms: 0,
        p90Ms: 0,
        perCluster: [],
        method: "simulation",
        reason: "Placed",
        message: "starts now",
      });
      continue;
    }
    const w = nowWaiting.get(r.key);
    const nw = never.get(r.key);
    if (nw) {
      out.push({
        key: r.key,
        asOf,
        p10Ms: Number.POSITIVE_INFINITY,
        p50Ms: Number.POSITIVE_INFINITY,
        p90Ms: Number.POSITIVE_INFINITY,
        perCluster: [],
        method: "never",
        reason: nw.reason,
        message: `cannot start while ${nw.message}`,
      });
      continue;
    }
    const reason = w?.reason ?? "NoCapacity";
    let eta: Eta;
    if (sims.length > 0 && lengths.known(r.gpuModel)) eta = fromSamples(r.key, asOf, reason, now, sims);
    else {
      const k = w?.position ?? 1;
      const [p10, p50, p90] =
        rate > 0
          ? [erlang(k, rate, -Z90), erlang(k, rate, 0), erlang(k, rate, Z90)]
          : [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
      eta = {
        key: r.key,
        asOf,
        p10Ms: p10,
        p50Ms: p50,
        p90Ms: p90,
        perCluster: [],
        method: "throughput",
        reason,
        message:
          rate > 0
            ? `starts in about ${minutes(p50)} (${minutes(p10)}–${minutes(p90)}; position ${k} at ${(rate * 60 * MIN).toFixed(1)} starts an hour)`
            : "no estimate yet: no session has started recently",
      };
    }
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

function fromSamples(key: string, asOf: string, reason: string, now: number, sims: readonly SimResult[]): Eta {
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

function cardHoldings(running: readonly EtaRunning[]): CardHolding[] {
  return running.flatMap((r) =>
    r.assignment
      ? [
          {
            clusterId: r.clusterId,
            node: r.assignment.node,
            cards: r.assignment.cards,
            ...(r.slice ? { slice: r.slice } : {}),
          },
        ]
      : [],
  );
}
