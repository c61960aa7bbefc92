// The queue ETA's standings (eta.ts): fair share's admission as the worker's pass applies it, the queue
// as it stands now (placed, waiting with positions) and the requests that can never start as things are.
// Pure; the simulation (eta-simulation.ts) asks the same admission at every step.
import type { InventoryNodeView } from "../placement/capacity.ts";
import { type CardHolding, CardPool } from "../placement/cards.ts";
import { DEFAULT_CONSTRAINTS } from "../placement/constraints.ts";
import { planPlacement } from "../placement/plan.ts";
import type { PlacementRequest, Waiting } from "../placement/types.ts";
import type { EtaInput, EtaRunning, EtaShare } from "./eta-types.ts";
import { admitRequests, classifyWith, fairRequestOf, fleetCapacity, guaranteedFirst, HeldTally } from "./shares.ts";
import type { Classification, ShareTree } from "./types.ts";

export type Compare = (a: PlacementRequest, b: PlacementRequest) => number;

/**
 * Fair share's admission of `pending` (in queue order) against what `holding` holds, as the worker's pass
 * applies it (admitRequests): the requests that may take room, placement's order among them, and the
 * refused ones with their classification. Without fair share every request is admitted in `compare`'s order.
 */
export function admission(
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

/** The queue now: what the plan places at once, and what waits with its reason and position per model. */
export function standingsNow(
  input: EtaInput,
  waiting: readonly PlacementRequest[],
  compare: Compare,
): { placed: Set<string>; waiting: Map<string, Waiting>; never: Map<string, Waiting> } {
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
  return { placed: nowPlaced, waiting: nowWaiting, never };
}

/** Nodes with their cards' usage cleared: in the simulation what holds a card is the simulated sessions. */
export function emptied(nodes: readonly InventoryNodeView[]): InventoryNodeView[] {
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
export function neverReason(input: EtaInput, req: PlacementRequest): Waiting | undefined {
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

/** The cards the sessions with an assignment hold (placement's card pool counts them as taken). */
export function cardHoldings(
  running: readonly Pick<EtaRunning, "clusterId" | "assignment" | "slice">[],
): CardHolding[] {
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
