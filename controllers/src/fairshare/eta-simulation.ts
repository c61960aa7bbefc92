// The queue ETA's simulation (eta.ts): one forward run of the real placement from the state now, fair
// share's admission at every step (eta-standings.ts), running sessions ending at lengths drawn from the
// length model (eta-lengths.ts) and, when given, the arrivals expected to rank ahead. Pure for a seed.
import { CardPool } from "../placement/cards.ts";
import { DEFAULT_CONSTRAINTS } from "../placement/constraints.ts";
import { compareRequests, planPlacement } from "../placement/plan.ts";
import type { ClusterCapacity, PlacementRequest } from "../placement/types.ts";
import type { Lengths } from "./eta-lengths.ts";
import { admission, cardHoldings, emptied } from "./eta-standings.ts";
import { quantile } from "./eta-stats.ts";
import type { EtaArrivals, EtaInput, EtaRunning } from "./eta-types.ts";
import { fleetCapacity } from "./shares.ts";

const MIN = 60_000;
const DEFAULT_HORIZON = 7 * 24 * 60 * MIN;
/**
 * Arrivals are expected this far ahead at most: their rate is of the last hours, and a request refused for
 * long would otherwise see a day's worth of them queued (each step of the simulation walks the queue).
 */
const ARRIVALS_AHEAD = 24 * 60 * MIN;

interface SimRunning {
  key: string;
  clusterId: string;
  gpuModel: string;
  gpuCount: number;
  slice?: { memoryMib: number; cores: number };
  assignment?: { node: string; cards: string[] };
  end: number;
}

export interface SimResult {
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

export function simulate(
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
    const cards = nodes ? new CardPool(nodes, cardHoldings(running)) : undefined;
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
