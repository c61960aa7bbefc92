// The placement pass's plan when fair share is on (docs/dev/fair-share.md): waiting sessions become fair
// requests (owner, card equivalents, the class fixed at creation), sessions holding GPUs become holders,
// and the core's planFairPass orders the queue by priority, then decayed usage against weighted fair
// share and aging, and admits a borrowed session only within the borrowing and lending limits. Pure: the
// pass (placement-pass.ts) reads and writes.
import { gpuOccupancy, migProfileOf, migShare, type Session } from "@berth/crds";
import { planFairPass } from "../fairshare/pass.ts";
import { fairRequestOf } from "../fairshare/shares.ts";
import type { CapacityClass, FairRequest, Holder, Owner } from "../fairshare/types.ts";
import type { CardPool } from "../placement/cards.ts";
import type {
  ClusterCapacity,
  Constraint,
  PlacementPlan,
  PlacementPolicy,
  PlacementRequest,
} from "../placement/types.ts";
import type { FairShareView } from "./store.ts";

/** What fair share reads of a session beyond its placement request. */
export interface FairSide extends Owner {
  cards: number;
  capacityClass: CapacityClass;
}

/** `gpuModel`: the card's (a MIG profile's share depends on it: 1g.10gb is 1/7 of an 80 GB card, 1/4 of a 40 GB one). */
export function fairSideOf(s: Session, gpuCount: number, gpuModel: string | undefined): FairSide {
  const mig = s.spec.migProfile && gpuModel ? migProfileOf(gpuModel, s.spec.migProfile) : undefined;
  return {
    org: s.spec.organization,
    project: s.spec.project ?? "",
    user: s.spec.owner,
    cards: gpuOccupancy(gpuCount, s.spec.gpuSlice?.slicesPerCard, mig ? migShare(mig) : undefined),
    capacityClass: s.spec.capacityClass ?? "guaranteed",
  };
}

/** A session holding GPUs, as fair share's tally and reclaim order read it. */
export function holderOf(s: Session, key: string, gpuCount: number, now: Date): Holder | undefined {
  const st = s.status;
  if (!st?.cluster || !st.gpuModel) return undefined;
  const notice = st.capacityReclaim;
  return {
    key,
    clusterId: st.cluster,
    gpuModel: st.gpuModel,
    ...fairSideOf(s, gpuCount, st.gpuModel),
    priority: s.spec.priority,
    startedAt: st.startedAt ?? now.toISOString(),
    idle: (st.reclaim?.idle?.warned.length ?? 0) > 0,
    ...(notice && !notice.pausedAt ? { reclaiming: true } : {}),
  };
}

export function fairPlacementPlan(input: {
  now: Date;
  view: FairShareView;
  requests: readonly PlacementRequest[];
  sides: ReadonlyMap<string, FairSide>;
  holders: readonly Holder[];
  clusters: readonly ClusterCapacity[];
  policy: PlacementPolicy;
  constraints?: readonly Constraint[];
  cards?: CardPool;
}): PlacementPlan {
  const requests: FairRequest[] = input.requests.map((r) => fairRequestOf(r, input.sides.get(r.key) as FairSide));
  const plan = planFairPass({
    now: input.now.toISOString(),
    tree: input.view.tree,
    settings: input.view.settings,
    usage: input.view.usage,
    requests,
    holders: input.holders,
    clusters: input.clusters,
    policy: input.policy,
    ...(input.constraints ? { constraints: input.constraints } : {}),
    ...(input.cards ? { cards: input.cards } : {}),
  });
  return { placed: plan.placed, waiting: plan.waiting };
}
