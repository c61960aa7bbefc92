// Queue ETAs for GET /api/v1/queue and a session's page (docs/dev/fair-share.md): the pure core's
// estimateQueue (controllers/src/fairshare/eta.ts) run over the fleet as Postgres holds it now — the
// waiting sessions in placement's order (guaranteed before borrowed, then priority and age), those that
// hold GPUs with their time limits, the clusters' inventory, and the lengths of recent finished runs.
import {
  compareRequests,
  computeCapacity,
  type Eta,
  type EtaRunning,
  estimateQueue,
  type LengthSample,
  type PlacementRequest,
} from "@berth/controllers";
import { gpuOccupancy, shareOfRow } from "@berth/crds";
import type { Knex } from "knex";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import { placementInventory } from "../../db/operations/sessions/workerQueries.ts";
import { reclaimPolicyOf } from "../catalog/reclaimPolicy.ts";
import type { SessionsRuntime } from "../sessions/runtime.ts";
import { readSystemSettings } from "../settings/settings.ts";

const HOLDING = ["Starting", "Resuming", "Running", "Restarting", "Pausing"];
/** A cluster silent this long is not placeable (the worker's reportGraceMs default). */
const SILENT_MS = 60_000;

export async function queueEtas(db: Knex, sessions: SessionsRuntime | undefined, now: Date): Promise<Map<string, Eta>> {
  const [waitingRows, holdingRows, finished, clusters, nodes, settings] = await Promise.all([
    db("sessions").where({ desired_state: "Running" }).whereIn("phase", ["Pending", "Queued"]) as Promise<SessionRow[]>,
    db("sessions").whereIn("phase", HOLDING).whereNotNull("cluster_id") as Promise<SessionRow[]>,
    db("sessions")
      .whereNotNull("started_at")
      .where((q) => q.whereNotNull("paused_at").orWhereNotNull("terminated_at"))
      .orderBy("updated_at", "desc")
      .limit(500)
      .select(
        "gpu_model",
        "gpu_count",
        "gpu_slices_per_card",
        "gpu_share_num",
        "gpu_share_den",
        "started_at",
        "paused_at",
        "terminated_at",
      ) as Promise<SessionRow[]>,
    db("clusters").whereNull("deregistered_at").select("id", "last_report_at") as Promise<
      { id: string; last_report_at: Date | null }[]
    >,
    placementInventory(db),
    readSystemSettings(db),
  ]);
  if (waitingRows.length === 0) return new Map();
  const policies = sessions ? await sessions.catalog.policies().catch(() => []) : [];
  const maxRuntimeMs = (r: SessionRow) =>
    reclaimPolicyOf(policies, { organizationId: r.organization_id, projectId: r.project_id, userId: r.owner_id })
      .maxRuntimeMinutes * 60_000;

  const capacity = computeCapacity(
    clusters.map((c) => ({
      clusterId: c.id,
      placeable: c.last_report_at !== null && now.getTime() - new Date(c.last_report_at).getTime() < SILENT_MS,
    })),
    nodes,
    holdingRows
      .filter((r) => r.gpu_slices_per_card === null)
      .map((r) => ({ clusterId: r.cluster_id as string, gpuModel: r.gpu_model, gpuCount: r.gpu_count })),
  );
  const borrowed = new Set(waitingRows.filter((r) => r.capacity_class === "borrowed").map((r) => r.id));
  const waiting: PlacementRequest[] = waitingRows.map((r) => ({
    key: r.id,
    gpuModel: r.gpu_model,
    gpuCount: r.gpu_count,
    ...(r.gpu_slices_per_card && r.gpu_slice_memory_mib
      ? { slice: { memoryMib: r.gpu_slice_memory_mib, cores: Math.floor(100 / r.gpu_slices_per_card) } }
      : {}),
    priority: r.priority,
    since: (r.queued_at ?? r.created_at).toISOString(),
    ...(r.cluster_pin ? { clusterPin: r.cluster_pin } : {}),
    volumes: [],
  }));
  const running: EtaRunning[] = holdingRows.map((r) => ({
    key: r.id,
    clusterId: r.cluster_id as string,
    gpuModel: r.gpu_model,
    gpuCount: r.gpu_count,
    startedAt: (r.started_at ?? r.updated_at).toISOString(),
    maxRuntimeMs: maxRuntimeMs(r),
  }));
  const history: LengthSample[] = finished.flatMap((r) => {
    const end = r.terminated_at ?? r.paused_at;
    if (!end || !r.started_at) return [];
    const lengthMs = end.getTime() - r.started_at.getTime();
    if (lengthMs <= 0) return [];
    return [
      {
        gpuModel: r.gpu_model,
        cards: gpuOccupancy(r.gpu_count, r.gpu_slices_per_card ?? undefined, shareOfRow(r)),
        lengthMs,
        endedAt: end.toISOString(),
      },
    ];
  });
  const etas = estimateQueue({
    now: now.toISOString(),
    waiting,
    running,
    clusters: capacity,
    policy: settings.placement.policy,
    nodes,
    compare: (a, b) => Number(borrowed.has(a.key)) - Number(borrowed.has(b.key)) || compareRequests(a, b),
    history,
    recentStarts: finished.flatMap((r) => (r.started_at ? [r.started_at.toISOString()] : [])),
    maxRuntimeMs: Object.fromEntries(waitingRows.map((r) => [r.id, maxRuntimeMs(r)])),
    seed: 7,
  });
  return new Map(etas.map((e) => [e.key, e]));
}
