// One placement pass with fair share: order the waiting requests by fair score, give each a capacity class
// (admitRequests: guarantees first, then borrowing, each reserved as it is given), place the
// admitted ones with the real placement (planPlacement, in the same order), and choose what to reclaim for
// guaranteed requests that still wait. Pure (docs/dev/fair-share.md).
import { DEFAULT_CONSTRAINTS } from "../placement/constraints.ts";
import { firstExclusion, planPlacement } from "../placement/plan.ts";
import type { Waiting } from "../placement/types.ts";
import { planReclaims } from "./reclaim.ts";
import { admitRequests, fleetCapacity, guaranteedFirst, HeldTally, managed, resolveSettings } from "./shares.ts";
import type { Classification, FairPassPlan, FairRequest, PlanFairPassFn } from "./types.ts";
import { fairComparator, scoreRequests } from "./usage.ts";

export const planFairPass: PlanFairPassFn = (input) => {
  const settings = resolveSettings(input.settings);
  const scores = scoreRequests(input.tree, input.usage, input.requests, input.now, settings);
  const compare = fairComparator(scores);
  const ordered = [...input.requests].sort(compare);
  const capacity = fleetCapacity(input.clusters);

  const classes = admitRequests(input.tree, new HeldTally(input.holders), ordered, capacity);
  const admitted: FairRequest[] = [];
  const refused: FairRequest[] = [];
  for (const req of ordered) (classes[req.key]?.kind === "refused" ? refused : admitted).push(req);

  const constraints = input.constraints ?? DEFAULT_CONSTRAINTS;
  const plan = planPlacement({
    requests: admitted,
    clusters: input.clusters,
    policy: input.policy,
    constraints,
    ...(input.cards ? { cards: input.cards } : {}),
    // Guaranteed before borrowed, each in fair order: room a reclaim frees goes to the request it was
    // for, not to a borrower that waits longer (its aging counts from its first start).
    compare: guaranteedFirst(classes, compare),
  });

  const byKey = new Map(input.requests.map((r) => [r.key, r]));
  const placed = plan.placed.map((p) => ({
    ...p,
    capacityClass: (classes[p.key]?.kind === "borrowed" ? "borrowed" : "guaranteed") as "borrowed" | "guaranteed",
  }));

  // Room left per cluster and model after this pass's placements.
  const free = new Map<string, number>();
  const slot = (cluster: string, model: string) => `${model}@${cluster}`;
  for (const c of input.clusters)
    for (const [model, m] of Object.entries(c.models)) free.set(slot(c.clusterId, model), Math.max(0, m.free));
  for (const p of plan.placed) {
    const r = byKey.get(p.key) as FairRequest;
    const k = slot(p.clusterId, r.gpuModel);
    free.set(k, (free.get(k) ?? 0) - r.cards);
  }

  // Reclaim for guaranteed requests that wait for room, in queue order (reclaim.ts: one reclaimer for the
  // pass, one reclaim per blocked need).
  const waitingNow = new Map(plan.waiting.map((w) => [w.key, w]));
  const needs = admitted.flatMap((req) => {
    const w = waitingNow.get(req.key);
    if (!w || classes[req.key]?.kind !== "guaranteed" || !managed(input.tree, req.gpuModel)) return [];
    if (w.reason !== "NoCapacity" && w.reason !== "PinnedClusterFull") return [];
    const eligibleClusters = input.clusters
      .filter((c) => firstExclusion(constraints, req, c) === undefined)
      .map((c) => c.clusterId);
    return [{ key: req.key, gpuModel: req.gpuModel, cards: req.cards, eligibleClusters }];
  });
  const reclaims = planReclaims({
    now: input.now,
    settings,
    tree: input.tree,
    usage: input.usage,
    holders: input.holders,
    needs,
    free,
  });

  // Positions per model over everything that waits, in queue order.
  const why = new Map<string, Waiting>(plan.waiting.map((w) => [w.key, w]));
  for (const r of refused) {
    const c = classes[r.key] as Extract<Classification, { kind: "refused" }>;
    why.set(r.key, { key: r.key, position: 0, reason: c.reason, message: c.message });
  }
  const positions = new Map<string, number>();
  const waiting: Waiting[] = [];
  for (const r of ordered) {
    const w = why.get(r.key);
    if (!w) continue;
    const position = (positions.get(r.gpuModel) ?? 0) + 1;
    positions.set(r.gpuModel, position);
    waiting.push({ ...w, position });
  }
  return { placed, waiting, classes, scores, reclaims } satisfies FairPassPlan;
};
