// Step 1 of the reclaim pass (reclaimPass.ts), decided: which borrowed sessions to warn for the guaranteed
// sessions that wait. Pure: the pass reads the fleet, its usage and its policies, and writes the notices
// (reclaimNotice.ts); here the holders and the waiting queue are put in placement's order and handed to
// the core's planReclaims (controllers/src/fairshare/reclaim.ts).
import { type FairRequest, fairComparator, type Holder, planReclaims, scoreRequests } from "@berth/controllers";
import { gpuOccupancy, type Session, shareOfRow } from "@berth/crds";
import type { inventoryByClusterModel } from "../../db/operations/sessions/fleetModels.ts";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import { fairShareSetting } from "../sessions/capacityClass.ts";
import type { SessionsRuntime } from "../sessions/runtime.ts";

const HOLDING = new Set(["Starting", "Resuming", "Running", "Restarting", "Pausing"]);

export const phaseOf = (s: Session) => s.status?.phase ?? "Pending";

type PlanInput = Parameters<typeof planReclaims>[0];

/** What the pass read, for the choice: its sessions (resource and row), the waiting guaranteed ones among them. */
export interface ReclaimState {
  now: Date;
  sessions: { s: Session; row: SessionRow }[];
  waiting: { s: Session; row: SessionRow }[];
  policies: Awaited<ReturnType<SessionsRuntime["catalog"]["policies"]>>;
  tree: PlanInput["tree"];
  settings: PlanInput["settings"];
  usage: PlanInput["usage"];
  inventory: Awaited<ReturnType<typeof inventoryByClusterModel>>;
}

export function chooseReclaims({
  now,
  sessions,
  waiting,
  policies,
  tree,
  settings,
  usage,
  inventory,
}: ReclaimState): ReturnType<typeof planReclaims> {
  const cardsOf = (row: SessionRow) =>
    gpuOccupancy(row.gpu_count, row.gpu_slices_per_card ?? undefined, shareOfRow(row));
  const holders: Holder[] = sessions
    .filter(({ s }) => s.status?.cluster && s.status.gpuModel && HOLDING.has(phaseOf(s)))
    .map(({ s, row }) => ({
      key: row.id,
      clusterId: s.status?.cluster as string,
      gpuModel: s.status?.gpuModel as string,
      cards: cardsOf(row),
      capacityClass: s.spec.capacityClass ?? "guaranteed",
      priority: s.spec.priority,
      startedAt: s.status?.startedAt ?? row.created_at.toISOString(),
      createdAt: row.created_at.toISOString(),
      idle: (s.status?.reclaim?.idle?.warned.length ?? 0) > 0,
      org: row.organization_id,
      project: row.project_id ?? "",
      user: row.owner_id,
      ...(s.status?.capacityReclaim && !s.status.capacityReclaim.pausedAt ? { reclaiming: true } : {}),
    }));
  const pastMinRuntime = (h: Holder) =>
    now.getTime() - Date.parse(h.startedAt) >=
    fairShareSetting(policies, { organizationId: h.org, projectId: h.project || null }, "minRuntimeSeconds") * 1000;

  // The guaranteed queue in placement's own order (priority, then fair score), so the head is served
  // first and room free now goes to the requests placement would give it to.
  const requests: FairRequest[] = waiting.map(({ s, row }) => ({
    key: row.id,
    gpuModel: row.gpu_model,
    gpuCount: row.gpu_count,
    cards: cardsOf(row),
    priority: s.spec.priority,
    since: s.status?.queuedAt ?? row.created_at.toISOString(),
    volumes: [],
    org: row.organization_id,
    project: row.project_id ?? "",
    user: row.owner_id,
    mayBorrow: false,
  }));
  requests.sort(fairComparator(scoreRequests(tree, usage, requests, now.toISOString(), settings)));
  const free = new Map<string, number>();
  for (const r of inventory) free.set(`${r.gpu_model}@${r.cluster_id}`, r.allocatable);
  for (const h of holders)
    free.set(`${h.gpuModel}@${h.clusterId}`, (free.get(`${h.gpuModel}@${h.clusterId}`) ?? 0) - h.cards);
  const pinOf = new Map(waiting.map(({ row }) => [row.id, row.cluster_pin]));
  return planReclaims({
    now: now.toISOString(),
    // Each borrowed session's own minimum runtime (its organization's and project's policy) is applied
    // to the holders here.
    settings: { ...settings, minRuntimeMs: 0 },
    tree,
    usage,
    holders: holders.filter((h) => h.capacityClass !== "borrowed" || h.reclaiming || pastMinRuntime(h)),
    needs: requests.map((r) => ({
      key: r.key,
      gpuModel: r.gpuModel,
      cards: r.cards,
      eligibleClusters: inventory
        .filter((i) => i.gpu_model === r.gpuModel && (!pinOf.get(r.key) || i.cluster_id === pinOf.get(r.key)))
        .map((i) => i.cluster_id),
    })),
    free,
  });
}
