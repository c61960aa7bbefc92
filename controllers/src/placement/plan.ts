// Placement as a pure function: the sessions that want a GPU and the fleet's room → which session goes
// where, and where each of the others stands in the queue.
//
// Order: priority (higher first), then age (older first), then key, so that the plan is deterministic.
// The queue is strict per lane: once a session waits for room of a GPU model (fleet-wide, or on the
// cluster(s) its pin or volumes leave it), younger and lower-priority sessions of that model do not
// overtake it there, even when they would fit. A large session is therefore never starved by a stream
// of small ones (Kueue's StrictFIFO); the price is that GPUs may stay idle while the head waits.
//
// Room is counted per cluster and model, not per node: the kube-scheduler picks the node. A session that
// fits the sum but no single node waits as Unschedulable in its cluster and the worker places it again
// after a while (see lifecycle.ts). `largestNode` keeps the obvious misfits out.
import { migKey } from "./capacity.ts";
import type { CardPool } from "./cards.ts";
import { DEFAULT_CONSTRAINTS } from "./constraints.ts";
import type {
  ClusterCapacity,
  Constraint,
  Exclusion,
  Placed,
  PlacementPlan,
  PlacementPolicy,
  PlacementRequest,
  Waiting,
} from "./types.ts";

export interface PlanPlacementInput {
  requests: readonly PlacementRequest[];
  clusters: readonly ClusterCapacity[];
  policy: PlacementPolicy;
  constraints?: readonly Constraint[];
  /** Card-level room of clusters with a sharing layer; without it every cluster is counted in whole GPUs. */
  cards?: CardPool;
  /** The queue's order; default compareRequests (priority, then age). Fair share passes its own. */
  compare?: (a: PlacementRequest, b: PlacementRequest) => number;
}

export function compareRequests(a: PlacementRequest, b: PlacementRequest): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.since !== b.since) return Date.parse(a.since) - Date.parse(b.since);
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

export function planPlacement(input: PlanPlacementInput): PlacementPlan {
  const constraints = input.constraints ?? DEFAULT_CONSTRAINTS;
  // Working copy: every placement in this plan takes its GPUs from it.
  const free = new Map<string, number>();
  const slot = (cluster: string, model: string) => `${model}@${cluster}`;
  for (const c of input.clusters)
    for (const [model, m] of Object.entries(c.models)) {
      free.set(slot(c.clusterId, model), Math.max(0, m.free));
      for (const [profile, p] of Object.entries(m.mig ?? {}))
        free.set(slot(c.clusterId, migKey(model, profile)), Math.max(0, p.free));
    }
  // A request's lane: its model's whole GPUs or slices, or one MIG profile of the model (its own resource).
  const laneOf = (req: PlacementRequest) => (req.migProfile ? migKey(req.gpuModel, req.migProfile) : req.gpuModel);

  const blocked = new Set<string>();
  const positions = new Map<string, number>();
  const placed: Placed[] = [];
  const waiting: Waiting[] = [];

  const wait = (req: PlacementRequest, reason: string, message: string) => {
    const position = (positions.get(req.gpuModel) ?? 0) + 1;
    positions.set(req.gpuModel, position);
    waiting.push({ key: req.key, position, reason, message });
  };

  for (const req of [...input.requests].sort(input.compare ?? compareRequests)) {
    const exclusions: { clusterId: string; why: Exclusion }[] = [];
    const eligible: ClusterCapacity[] = [];
    for (const c of input.clusters) {
      const why = firstExclusion(constraints, req, c);
      if (why) exclusions.push({ clusterId: c.clusterId, why });
      else eligible.push(c);
    }

    if (eligible.length === 0) {
      const { reason, message } = whyNowhere(req, exclusions);
      wait(req, reason, message);
      continue;
    }

    const restricted =
      req.clusterPin !== undefined ||
      req.volumes.some((v) => v.boundCluster !== undefined || v.allowedClusters !== undefined);
    const lane = laneOf(req);
    const usable = blocked.has(lane) ? [] : eligible.filter((c) => !blocked.has(slot(c.clusterId, lane)));
    // Clusters with a sharing layer are counted card by card (the pool), the others in whole GPUs.
    const cards = input.cards;
    const byCard = (c: ClusterCapacity) =>
      req.migProfile === undefined && cards?.shares(c.clusterId, req.gpuModel) === true;
    const demand = {
      gpuModel: req.gpuModel,
      gpuCount: req.gpuCount,
      ...(req.slice ? { slice: req.slice } : {}),
      ...(req.tenancy ? { tenancy: req.tenancy } : {}),
    };
    // A card-level cluster's choice is made once per request: fitting asks it, placing uses it.
    const choices = new Map<string, Placed["assignment"]>();
    const fitting = usable.filter((c) => {
      if (!byCard(c)) return !req.slice && (free.get(slot(c.clusterId, lane)) ?? 0) >= req.gpuCount;
      const a = cards?.choose(c.clusterId, demand, input.policy);
      choices.set(c.clusterId, a);
      return a !== undefined;
    });

    if (fitting.length > 0) {
      const chosen = choose(fitting, input.policy, (c) =>
        byCard(c) ? (cards as CardPool).room(c.clusterId, req.gpuModel) : (free.get(slot(c.clusterId, lane)) ?? 0),
      );
      let assignment: Placed["assignment"];
      if (byCard(chosen)) {
        assignment = choices.get(chosen.clusterId);
        if (assignment) (cards as CardPool).take(chosen.clusterId, demand, assignment);
      } else {
        free.set(slot(chosen.clusterId, lane), (free.get(slot(chosen.clusterId, lane)) ?? 0) - req.gpuCount);
      }
      const decisive = constraints.map((k) => k.decisiveReason?.(req)).find((r) => r !== undefined);
      const what = req.slice
        ? `a ${req.slice.memoryMib} MiB slice of ${req.gpuModel}`
        : req.migProfile
          ? `MIG ${req.migProfile} of ${req.gpuModel}`
          : `${req.gpuCount} × ${req.gpuModel}`;
      placed.push({
        key: req.key,
        clusterId: chosen.clusterId,
        ...(assignment ? { assignment } : {}),
        reason: decisive ?? "Placed",
        message: `placed on ${chosen.clusterId}${assignment ? ` (node ${assignment.node}, card ${assignment.cards.join(", ")})` : ""} (${what}, policy ${input.policy})`,
      });
      continue;
    }

    if (restricted) for (const c of eligible) blocked.add(slot(c.clusterId, lane));
    else blocked.add(lane);
    const ahead = positions.get(req.gpuModel) ?? 0;
    if (req.clusterPin !== undefined) {
      wait(
        req,
        "PinnedClusterFull",
        `waiting for ${req.gpuCount} × ${req.gpuModel} on ${req.clusterPin}${ahead ? ` (${ahead} ahead)` : ""}`,
      );
    } else {
      wait(req, "NoCapacity", `waiting for ${req.gpuCount} × ${req.gpuModel}${ahead ? ` (${ahead} ahead)` : ""}`);
    }
  }
  return { placed, waiting };
}

export function firstExclusion(
  constraints: readonly Constraint[],
  req: PlacementRequest,
  c: ClusterCapacity,
): Exclusion | undefined {
  for (const k of constraints) {
    const why = k.exclude(req, c);
    if (why) return why;
  }
  return undefined;
}

/** No cluster is eligible at all: say why in the most useful terms. */
function whyNowhere(req: PlacementRequest, exclusions: { clusterId: string; why: Exclusion }[]): Exclusion {
  if (req.clusterPin !== undefined) {
    const own = exclusions.find((e) => e.clusterId === req.clusterPin);
    if (!own) return { reason: "ClusterNotReady", message: `the pinned cluster ${req.clusterPin} is not registered` };
    return own.why;
  }
  const notModel = exclusions.find((e) => e.why.reason !== "NoMatchingGpuModel");
  if (!notModel)
    return {
      reason: "NoMatchingGpuModel",
      message: `no cluster of the fleet offers ${req.gpuCount} × ${req.gpuModel}`,
    };
  return notModel.why;
}

function choose(
  candidates: ClusterCapacity[],
  policy: PlacementPolicy,
  freeOf: (c: ClusterCapacity) => number,
): ClusterCapacity {
  const sorted = [...candidates].sort((a, b) => {
    const fa = freeOf(a);
    const fb = freeOf(b);
    // binpack: the fullest cluster that still fits; spread: the emptiest.
    const d = policy === "binpack" ? fa - fb : fb - fa;
    return d !== 0 ? d : a.clusterId < b.clusterId ? -1 : a.clusterId > b.clusterId ? 1 : 0;
  });
  return sorted[0] as ClusterCapacity;
}
