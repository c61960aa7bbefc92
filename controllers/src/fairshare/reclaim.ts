// Which borrowed sessions give their room back to a guaranteed request (docs/dev/fair-share.md). Pure.
//
// Only borrowed sessions are candidates and a class is fixed for a run, so the run that reclaims (always
// guaranteed) can never be reclaimed by its victim: no back and forth (reclaim.test.ts, over random traces).
import type { ChooseReclaimFn, Holder, ReclaimChoice } from "./types.ts";
import { overShare } from "./usage.ts";

const EPS = 1e-9;

// A pass asks for many requests over the same holders: parse each start time once.
const startedMs = new WeakMap<Holder, number>();
function started(h: Holder): number {
  let v = startedMs.get(h);
  if (v === undefined) {
    v = Date.parse(h.startedAt);
    startedMs.set(h, v);
  }
  return v;
}

export const chooseReclaim: ChooseReclaimFn = (input) => {
  const { request, settings } = input;
  const now = Date.parse(input.now);
  const over = new Map<string, number>();
  const overOf = (org: string) => {
    let v = over.get(org);
    if (v === undefined) {
      v = overShare(input.tree, input.usage, org);
      over.set(org, v);
    }
    return v;
  };

  let best: { choice: ReclaimChoice; active: number; cards: number } | undefined;
  for (const clusterId of [...request.eligibleClusters].sort()) {
    const here = input.holders.filter((h) => h.clusterId === clusterId && h.gpuModel === request.gpuModel);
    const coming = here.reduce((s, h) => s + (h.reclaiming ? h.cards : 0), 0);
    const shortfall = request.cards - (input.free[clusterId] ?? 0) - coming;
    if (shortfall <= EPS) continue; // room is there or coming: nothing to reclaim for it here
    const candidates = here
      .filter((h) => h.capacityClass === "borrowed" && !h.reclaiming && now - started(h) >= settings.minRuntimeMs)
      .sort((a, b) => order(a, b, overOf));
    const taken: Holder[] = [];
    let sum = 0;
    for (const h of candidates) {
      if (sum >= shortfall - EPS) break;
      taken.push(h);
      sum += h.cards;
    }
    if (sum < shortfall - EPS) continue;
    // Only as much as needed: give back, last chosen first, any whose room is not needed after all.
    for (let i = taken.length - 1; i >= 0; i--) {
      const h = taken[i] as Holder;
      if (sum - h.cards >= shortfall - EPS) {
        taken.splice(i, 1);
        sum -= h.cards;
      }
    }
    const active = taken.filter((h) => !h.idle).length;
    const better = !best || active < best.active || (active === best.active && sum < best.cards - EPS);
    if (better)
      best = {
        active,
        cards: sum,
        choice: {
          forKey: request.key,
          clusterId,
          victims: taken.map((h) => ({ key: h.key, cards: h.cards, why: why(h, overOf(h.org)) })),
        },
      };
  }
  return best?.choice;
};

/** Idle first, then the most over fair share, then the lowest priority, then the newest, then key. */
function order(a: Holder, b: Holder, overOf: (org: string) => number): number {
  if (a.idle !== b.idle) return a.idle ? -1 : 1;
  const oa = overOf(a.org);
  const ob = overOf(b.org);
  if (Math.abs(oa - ob) > EPS) return ob - oa;
  if (a.priority !== b.priority) return a.priority - b.priority;
  const sa = started(a);
  const sb = started(b);
  if (sa !== sb) return sb - sa;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

function why(h: Holder, over: number): string {
  const state = h.idle ? "idle" : "active";
  return `${state} borrowed session of ${h.org} (usage ${over.toFixed(2)} × its fair share, priority ${h.priority}, started ${h.startedAt})`;
}
