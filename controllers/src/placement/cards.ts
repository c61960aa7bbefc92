// Card-level room on clusters with a GPU sharing layer (docs/dev/gpu-sharing.md). Placement packs slices
// onto cards by free memory, cores and vGPU slots, and gives whole-card sessions cards nothing else holds;
// the pod is then pinned to the chosen node and cards. Pure: a working copy that each placement of a pass
// takes from.
//
// Used per card = max(what the inventory says the node's pods hold, what Berth's sessions placed there
// hold), for memory, cores and vGPUs alike: the inventory lags a fresh placement by a report, and Berth's
// count misses other tenants' pods; the larger is never an overcommit by Berth.
import type { CardView, InventoryNodeView } from "./capacity.ts";
import { mayUseNode } from "./constraints.ts";
import type { NodePoolRef, PlacementPolicy, Tenancy } from "./types.ts";

/** What a session asks of one cluster's cards. */
export interface CardDemand {
  gpuModel: string;
  /** Whole cards; 1 for a slice. */
  gpuCount: number;
  /** A slice of one card; absent: whole cards. */
  slice?: { memoryMib: number; cores: number };
  /** Whose session: nodes in node pools not granted to it are skipped. */
  tenancy?: Tenancy;
}

/** The cards a Berth session holds (or is about to). */
export interface CardHolding {
  clusterId: string;
  node: string;
  cards: readonly string[];
  /** Per card; absent: the whole card. */
  slice?: { memoryMib: number; cores: number };
}

export interface CardAssignment {
  node: string;
  cards: string[];
}

interface Card {
  uuid: string;
  index: number;
  memoryMib: number;
  cores: number;
  split: number;
  memoryUsed: number;
  coresUsed: number;
  vgpusUsed: number;
}

interface Node {
  name: string;
  cards: Card[];
  pools?: readonly NodePoolRef[];
}

const key = (clusterId: string, model: string) => `${model}@${clusterId}`;

function idle(c: Card): boolean {
  return c.vgpusUsed === 0 && c.memoryUsed === 0 && c.coresUsed === 0;
}

function fitsSlice(c: Card, slice: { memoryMib: number; cores: number }): boolean {
  return (
    c.vgpusUsed + 1 <= c.split && c.memoryUsed + slice.memoryMib <= c.memoryMib && c.coresUsed + slice.cores <= c.cores
  );
}

export class CardPool {
  /** Usable nodes (schedulable, ready, healthy cards only) per cluster and model. */
  readonly #nodes = new Map<string, Node[]>();

  constructor(nodes: readonly InventoryNodeView[], holdings: readonly CardHolding[]) {
    // Per cluster, per card UUID (nested maps: no key strings built per card, the pass's hot path).
    const held = new Map<string, Map<string, { memory: number; cores: number; vgpus: number; whole: boolean }>>();
    for (const h of holdings) {
      let byCard = held.get(h.clusterId);
      if (!byCard) {
        byCard = new Map();
        held.set(h.clusterId, byCard);
      }
      for (const uuid of h.cards) {
        let u = byCard.get(uuid);
        if (!u) {
          u = { memory: 0, cores: 0, vgpus: 0, whole: false };
          byCard.set(uuid, u);
        }
        if (h.slice) {
          u.memory += h.slice.memoryMib;
          u.cores += h.slice.cores;
        } else u.whole = true;
        u.vgpus += 1;
      }
    }
    for (const n of nodes) {
      if (!n.sharing || !n.cards || !n.gpuModel) continue;
      const k = key(n.clusterId, n.gpuModel);
      let list = this.#nodes.get(k);
      if (!list) {
        list = [];
        this.#nodes.set(k, list);
      }
      if (!n.schedulable || !n.ready) continue;
      const byCard = held.get(n.clusterId);
      const cards: Card[] = [];
      for (let index = 0; index < n.cards.length; index++) {
        const c = n.cards[index] as CardView;
        if (!c.healthy) continue;
        const h = byCard?.get(c.uuid);
        const takenWhole = h?.whole === true;
        cards.push({
          uuid: c.uuid,
          index,
          memoryMib: c.memoryMib,
          cores: c.cores,
          split: c.split,
          memoryUsed: takenWhole ? c.memoryMib : Math.max(c.memoryUsedMib, h?.memory ?? 0),
          coresUsed: takenWhole ? c.cores : Math.max(c.coresUsed, h?.cores ?? 0),
          vgpusUsed: Math.max(c.vgpusUsed, h?.vgpus ?? 0),
        });
      }
      list.push({ name: n.name, cards, ...(n.pools && n.pools.length > 0 ? { pools: n.pools } : {}) });
    }
    for (const list of this.#nodes.values()) list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Whether placement on this cluster and model goes card by card (its nodes run a sharing layer). */
  shares(clusterId: string, model: string): boolean {
    return this.#nodes.has(key(clusterId, model));
  }

  /** Free room in card equivalents (free memory over card memory, summed): what the policy compares. */
  room(clusterId: string, model: string): number {
    let r = 0;
    for (const n of this.#nodes.get(key(clusterId, model)) ?? [])
      for (const c of n.cards) r += c.memoryMib > 0 ? (c.memoryMib - c.memoryUsed) / c.memoryMib : 0;
    return r;
  }

  /** Whole cards nothing holds. */
  wholeFree(clusterId: string, model: string): number {
    let r = 0;
    for (const n of this.#nodes.get(key(clusterId, model)) ?? []) for (const c of n.cards) if (idle(c)) r++;
    return r;
  }

  /** Slices of this size that still fit, card by card. */
  slicesFree(clusterId: string, model: string, slice: { memoryMib: number; cores: number }): number {
    let r = 0;
    for (const n of this.#nodes.get(key(clusterId, model)) ?? [])
      for (const c of n.cards) {
        const byMemory = Math.floor((c.memoryMib - c.memoryUsed) / Math.max(1, slice.memoryMib));
        const byCores = slice.cores > 0 ? Math.floor((c.cores - c.coresUsed) / slice.cores) : byMemory;
        r += Math.max(0, Math.min(byMemory, byCores, c.split - c.vgpusUsed));
      }
    return r;
  }

  /** Where the demand would go under the policy, or undefined when no card (or node of cards) has room. */
  choose(clusterId: string, d: CardDemand, policy: PlacementPolicy): CardAssignment | undefined {
    const all = this.#nodes.get(key(clusterId, d.gpuModel)) ?? [];
    const nodes = all.some((n) => n.pools) ? all.filter((n) => mayUseNode(d.tenancy, n.pools)) : all;
    if (d.slice) {
      const slice = d.slice;
      let best: { node: Node; card: Card; left: number } | undefined;
      for (const node of nodes)
        for (const card of node.cards) {
          if (!fitsSlice(card, slice)) continue;
          const left = card.memoryMib - card.memoryUsed - slice.memoryMib;
          // binpack: the card left fullest (slices fill a card before the next is touched); spread: emptiest.
          const better = !best || (policy === "binpack" ? left < best.left : left > best.left);
          if (better) best = { node, card, left };
        }
      return best ? { node: best.node.name, cards: [best.card.uuid] } : undefined;
    }
    let best: { node: Node; free: Card[] } | undefined;
    for (const node of nodes) {
      const free = node.cards.filter(idle);
      if (free.length < d.gpuCount) continue;
      const better = !best || (policy === "binpack" ? free.length < best.free.length : free.length > best.free.length);
      if (better) best = { node, free };
    }
    return best ? { node: best.node.name, cards: best.free.slice(0, d.gpuCount).map((c) => c.uuid) } : undefined;
  }

  /** Takes what `choose` returned. */
  take(clusterId: string, d: CardDemand, a: CardAssignment): void {
    const node = (this.#nodes.get(key(clusterId, d.gpuModel)) ?? []).find((n) => n.name === a.node);
    for (const c of node?.cards ?? []) {
      if (!a.cards.includes(c.uuid)) continue;
      c.vgpusUsed += 1;
      c.memoryUsed += d.slice ? d.slice.memoryMib : c.memoryMib - c.memoryUsed;
      c.coresUsed += d.slice ? d.slice.cores : c.cores - c.coresUsed;
    }
  }

  /** Every usable card with what it holds (tests and the bench check invariants on it). */
  cards(clusterId: string, model: string): readonly (Readonly<Card> & { node: string })[] {
    return (this.#nodes.get(key(clusterId, model)) ?? []).flatMap((n) => n.cards.map((c) => ({ ...c, node: n.name })));
  }
}

/** The cards of one inventory node as placement sees them (for builders and the bench). */
export type { CardView };
