// Which borrowed sessions give their room back to a guaranteed request (docs/dev/fair-share.md). Pure.
//
// Only borrowed sessions are candidates and a class is fixed for a run, so the run that reclaims (always
// guaranteed) can never be reclaimed by its victim: no back and forth (reclaim.test.ts, over random traces).
import type { ChooseReclaimFn, Holder, ReclaimChoice, ReclaimInput } from "./types.ts";
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

export const chooseReclaim: ChooseReclaimFn = (input) => new Reclaimer(input).choose(input.request, input.free);

interface Slot {
  /** Candidates (borrowed, past their minimum runtime, not under notice) in reclaim order. */
  candidates: Holder[];
  /** Their cards: a request short of more than this (less free and coming) is not searched here. */
  available: number;
  /** Cards under notice: room that is coming. */
  coming: number;
}

/**
 * Reclaim for a queue over one set of holders: each cluster's candidates are sorted once, and the victims
 * chosen for one request are room coming for the next. A pass asks for hundreds of requests over thousands
 * of borrowed sessions; asking chooseReclaim for each sorted them all again every time.
 */
export class Reclaimer {
  readonly #slots = new Map<string, Slot>();
  readonly #over = new Map<string, number>();

  constructor(input: Pick<ReclaimInput, "now" | "settings" | "tree" | "usage" | "holders">) {
    const now = Date.parse(input.now);
    const overOf = (org: string) => {
      let v = this.#over.get(org);
      if (v === undefined) {
        v = overShare(input.tree, input.usage, org);
        this.#over.set(org, v);
      }
      return v;
    };
    for (const h of input.holders) {
      const slot = this.#slot(h.gpuModel, h.clusterId);
      if (h.reclaiming) slot.coming += h.cards;
      else if (h.capacityClass === "borrowed" && now - started(h) >= input.settings.minRuntimeMs) {
        slot.candidates.push(h);
        slot.available += h.cards;
        overOf(h.org);
      }
    }
    for (const slot of this.#slots.values()) slot.candidates.sort((a, b) => order(a, b, overOf));
  }

  /** Cards of the model under notice on the cluster (including those this reclaimer chose). */
  coming(gpuModel: string, clusterId: string): number {
    return this.#slots.get(key(gpuModel, clusterId))?.coming ?? 0;
  }

  /** chooseReclaim's answer for the request; its victims count as coming room from then on. */
  choose(request: ReclaimInput["request"], free: Record<string, number>): ReclaimChoice | undefined {
    let best: { choice: ReclaimChoice; active: number; cards: number; slot: Slot; taken: Holder[] } | undefined;
    for (const clusterId of [...request.eligibleClusters].sort()) {
      const slot = this.#slots.get(key(request.gpuModel, clusterId));
      const shortfall = request.cards - (free[clusterId] ?? 0) - (slot?.coming ?? 0);
      if (shortfall <= EPS) continue; // room is there or coming: nothing to reclaim for it here
      if (!slot || slot.available < shortfall - EPS) continue;
      const taken: Holder[] = [];
      let sum = 0;
      for (const h of slot.candidates) {
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
          slot,
          taken,
          choice: {
            forKey: request.key,
            clusterId,
            victims: taken.map((h) => ({ key: h.key, cards: h.cards, why: why(h, this.#over.get(h.org) ?? 0) })),
          },
        };
    }
    if (!best) return undefined;
    const chosen = new Set(best.taken);
    best.slot.candidates = best.slot.candidates.filter((h) => !chosen.has(h));
    best.slot.available -= best.cards;
    best.slot.coming += best.cards;
    return best.choice;
  }

  #slot(gpuModel: string, clusterId: string): Slot {
    const k = key(gpuModel, clusterId);
    let slot = this.#slots.get(k);
    if (!slot) {
      slot = { candidates: [], available: 0, coming: 0 };
      this.#slots.set(k, slot);
    }
    return slot;
  }
}

const key = (gpuModel: string, clusterId: string) => `${gpuModel}@${clusterId}`;

/** A guaranteed request that waits for room, with the clusters its constraints allow. */
export interface BlockedNeed {
  key: string;
  gpuModel: string;
  cards: number;
  eligibleClusters: readonly string[];
}

/**
 * One pass's reclaims for the guaranteed requests that wait, in queue order (the head first): one
 * Reclaimer (each cluster's candidates sorted once), and one reclaim per blocked need. Room free now,
 * room coming (notices already out) and room already promised to a request ahead are given out in
 * that order first, so a request whose room is there or coming takes nobody, and a pass that runs again
 * while the notices are out chooses nothing new. `free` is free card equivalents per `model@cluster`.
 */
export function planReclaims(
  input: Pick<ReclaimInput, "now" | "settings" | "tree" | "usage" | "holders"> & {
    needs: readonly BlockedNeed[];
    free: ReadonlyMap<string, number>;
  },
): ReclaimChoice[] {
  const reclaims: ReclaimChoice[] = [];
  // Only borrowed sessions matter (as victims, or as room coming when under notice).
  const borrowed = input.holders.filter((h) => h.capacityClass === "borrowed");
  if (borrowed.length === 0) return reclaims;
  const lent = new Set(borrowed.map((h) => h.gpuModel));
  const reclaimer = new Reclaimer({ ...input, holders: borrowed });
  const promised = new Map<string, number>();
  for (const req of input.needs) {
    if (!lent.has(req.gpuModel)) continue;
    const roomFor: Record<string, number> = {};
    for (const id of req.eligibleClusters) {
      const k = key(req.gpuModel, id);
      roomFor[id] = (input.free.get(k) ?? 0) - (promised.get(k) ?? 0);
    }
    const choice = reclaimer.choose(req, roomFor);
    // Whether or not victims were needed, the room this request will take is promised to it.
    const target =
      choice?.clusterId ??
      req.eligibleClusters.find((id) => (roomFor[id] ?? 0) + reclaimer.coming(req.gpuModel, id) >= req.cards);
    if (target) {
      const k = key(req.gpuModel, target);
      promised.set(k, (promised.get(k) ?? 0) + req.cards);
    }
    if (choice) reclaims.push(choice);
  }
  return reclaims;
}

/**
 * Idle first, then the most over fair share, then the lowest priority, then the newest (started, then
 * created), then key.
 */
function order(a: Holder, b: Holder, overOf: (org: string) => number): number {
  if (a.idle !== b.idle) return a.idle ? -1 : 1;
  const oa = overOf(a.org);
  const ob = overOf(b.org);
  if (Math.abs(oa - ob) > EPS) return ob - oa;
  if (a.priority !== b.priority) return a.priority - b.priority;
  const sa = started(a);
  const sb = started(b);
  if (sa !== sb) return sb - sa;
  const ca = a.createdAt ?? "";
  const cb = b.createdAt ?? "";
  if (ca !== cb) return ca < cb ? 1 : -1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** Read by the session's owner: their own organization goes unnamed (an id would tell them nothing). */
function why(h: Holder, over: number): string {
  const state = h.idle ? "idle" : "active";
  return `${state} borrowed session; its organization uses ${over.toFixed(2)} × its fair share; priority ${h.priority}; started ${h.startedAt}`;
}
