// Queue ETAs for GET /api/v1/queue and a session's page (docs/dev/fair-share.md): the pure core's
// estimateQueue (controllers/src/fairshare/eta.ts) run over the fleet as Postgres holds it now — the
// waiting sessions in the worker's placement order (guaranteed before borrowed, then priority and, with
// fair share, usage against share and aging, else age) and, with fair share, its admission (borrowing and
// lending limits), those that hold GPUs with their time limits and reclaim deadlines, the clusters'
// inventory, and the lengths of recent finished runs.
import {
  compareRequests,
  computeCapacity,
  type Eta,
  type EtaInput,
  type EtaRunning,
  type EtaShare,
  estimateQueue,
  type FairRequest,
  type FairShareView,
  fairComparator,
  fairRequestOf,
  type LengthSample,
  type PlacementRequest,
  resolveSettings,
  scoreRequests,
} from "@berth/controllers";
import {
  gpuOccupancy,
  type KindDefinition,
  type Offering,
  OfferingKind,
  type ResourcePolicy,
  shareOfRow,
} from "@berth/crds";
import type { Knex } from "knex";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import { placementInventory } from "../../db/operations/sessions/workerQueries.ts";
import { policiesAt } from "../catalog/policyChain.ts";
import { reclaimPolicyOf } from "../catalog/reclaimPolicy.ts";
import { listObjects } from "../catalog/store.ts";
import type { SessionsRuntime } from "../sessions/runtime.ts";
import { readSystemSettings } from "../settings/settings.ts";
import { fairShareReader } from "./placementInput.ts";

const HOLDING = ["Starting", "Resuming", "Running", "Restarting", "Pausing"];
/** What the worker's placement pass takes as waiting when the session is to run (placement-pass.ts). */
const WAITING = ["Pending", "Queued", "Paused"];
/** A cluster silent this long is not placeable (the worker's reportGraceMs default). */
const SILENT_MS = 60_000;

/** With fair share, the recent arrivals whose rate the ETA expects to go on (bench/src/fair-share-eta.ts). */
export const ARRIVAL_WINDOW_MS = 6 * 60 * 60_000;

/** At most this many other shapes per session: each is a Monte Carlo of its own. */
const MAX_ALTERNATIVES = 4;

type Alternative = { label: string; request: PlacementRequest };

/**
 * Shapes the session's owner could start instead (docs/dev/fair-share.md): the same request without its
 * cluster pin, a smaller slice of its GPU model, or another GPU model, from the offerings allowed at the
 * session's scope whose model the fleet has. Smaller first; the ETA names the one that starts clearly sooner.
 */
export function alternativesFor(
  row: SessionRow,
  request: PlacementRequest,
  offerings: readonly Offering[],
  policies: readonly ResourcePolicy[],
  fleetModels: ReadonlySet<string>,
): Alternative[] {
  const out: Alternative[] = [];
  if (request.clusterPin) {
    const { clusterPin: _, ...unpinned } = request;
    out.push({ label: "the same session on any cluster", request: unpinned });
  }
  const allowed = policiesAt(policies, {
    organizationId: row.organization_id,
    projectId: row.project_id,
    userId: row.owner_id,
  })
    .map(([p]) => p)
    .find((p) => p.spec.allowedOfferings !== undefined)?.spec.allowedOfferings;
  const occupancy = gpuOccupancy(row.gpu_count, row.gpu_slices_per_card ?? undefined, shareOfRow(row));
  const shapes: (Alternative & { occupancy: number })[] = [];
  for (const o of offerings) {
    const name = o.metadata.name as string;
    if (name === row.offering || (allowed && !allowed.includes(name)) || !fleetModels.has(o.spec.gpuModel)) continue;
    const n = o.spec.slicesPerCard;
    if (n && o.spec.gpuMemoryMib) {
      if (o.spec.gpuModel !== row.gpu_model || 1 / n >= occupancy) continue;
      shapes.push({
        label: `a 1/${n} slice of ${o.spec.gpuModel} (offering ${name})`,
        occupancy: 1 / n,
        request: {
          ...request,
          gpuCount: 1,
          slice: { memoryMib: Math.floor(o.spec.gpuMemoryMib / n), cores: Math.floor(100 / n) },
        },
      });
    } else if (!n && o.spec.gpuModel !== row.gpu_model) {
      const { slice: _, ...whole } = request;
      shapes.push({
        label: `${row.gpu_count} × ${o.spec.gpuModel} (offering ${name})`,
        occupancy: row.gpu_count,
        request: { ...whole, gpuModel: o.spec.gpuModel, gpuCount: row.gpu_count },
      });
    }
  }
  shapes.sort((a, b) => a.occupancy - b.occupancy || a.label.localeCompare(b.label));
  for (const { occupancy: _, ...alt } of shapes) out.push(alt);
  return out.slice(0, MAX_ALTERNATIVES);
}

/** A reclaim not withdrawn and not yet run again (capacity_reclaims). */
export interface OpenReclaim {
  session_id: string;
  pause_at: Date;
  paused_at: Date | null;
}

/**
 * The core's input from the rows, as the worker's placement pass sees the same sessions (pure). A session
 * paused by a reclaim waits from its first start, ahead of newer work (placement-pass.ts); one under a
 * notice ends by its pause at the latest; with fair share the queue goes in planFairPass's order (usage
 * against weighted share, then aging: scoreRequests now); recent starts count the runs still going.
 */
export function etaInputOf(o: {
  now: Date;
  waitingRows: readonly SessionRow[];
  holdingRows: readonly SessionRow[];
  finished: readonly SessionRow[];
  reclaims: readonly OpenReclaim[];
  maxRuntimeMs: (r: SessionRow) => number;
  fair?: FairShareView | undefined;
  /** Sessions created in the last ARRIVAL_WINDOW_MS: with fair share, the arrivals to expect ahead. */
  arrivals?: readonly SessionRow[];
}): Pick<
  EtaInput,
  "waiting" | "running" | "history" | "recentStarts" | "maxRuntimeMs" | "compare" | "fairShare" | "arrivals"
> {
  const pauseAt = new Map(o.reclaims.filter((r) => r.paused_at === null).map((r) => [r.session_id, r.pause_at]));
  const reclaimed = new Set(o.reclaims.filter((r) => r.paused_at !== null).map((r) => r.session_id));
  const borrowed = new Set(o.waitingRows.filter((r) => r.capacity_class === "borrowed").map((r) => r.id));
  const requestOf = (r: SessionRow): PlacementRequest => ({
    key: r.id,
    gpuModel: r.gpu_model,
    gpuCount: r.gpu_count,
    ...(r.gpu_slices_per_card && r.gpu_slice_memory_mib
      ? { slice: { memoryMib: r.gpu_slice_memory_mib, cores: Math.floor(100 / r.gpu_slices_per_card) } }
      : {}),
    priority: r.priority,
    since: (reclaimed.has(r.id) && r.phase === "Paused" && r.started_at
      ? r.started_at
      : (r.queued_at ?? r.created_at)
    ).toISOString(),
    ...(r.cluster_pin ? { clusterPin: r.cluster_pin } : {}),
    volumes: [],
  });
  const waiting = o.waitingRows.map(requestOf);
  const running: EtaRunning[] = o.holdingRows.map((r) => {
    const startedAt = r.started_at ?? r.updated_at;
    const notice = pauseAt.get(r.id);
    const limit = o.maxRuntimeMs(r);
    return {
      key: r.id,
      clusterId: r.cluster_id as string,
      gpuModel: r.gpu_model,
      gpuCount: r.gpu_count,
      startedAt: startedAt.toISOString(),
      maxRuntimeMs: notice ? Math.min(limit, Math.max(0, notice.getTime() - startedAt.getTime())) : limit,
    };
  });
  const history: LengthSample[] = o.finished.flatMap((r) => {
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
  let order: (a: PlacementRequest, b: PlacementRequest) => number = compareRequests;
  let fairShare: EtaInput["fairShare"];
  let arrivals: EtaInput["arrivals"];
  if (o.fair) {
    // Owner, size and class of every session waiting or holding GPUs, as the worker's pass reads them
    // (fair-placement.ts fairSideOf): the ETA admits as it admits.
    const shareOf = (r: SessionRow): EtaShare => ({
      org: r.organization_id,
      project: r.project_id ?? "",
      user: r.owner_id,
      cards: gpuOccupancy(r.gpu_count, r.gpu_slices_per_card ?? undefined, shareOfRow(r)),
      capacityClass: r.capacity_class,
    });
    fairShare = {
      tree: o.fair.tree,
      sessions: Object.fromEntries([...o.waitingRows, ...o.holdingRows].map((r) => [r.id, shareOf(r)])),
    };
    const requests: FairRequest[] = waiting.map((w, i) => {
      const r = o.waitingRows[i] as SessionRow;
      return fairRequestOf(w, fairShare?.sessions[r.id] as EtaShare);
    });
    const settings = resolveSettings(o.fair.settings);
    const scores = scoreRequests(o.fair.tree, o.fair.usage, requests, o.now.toISOString(), settings);
    order = fairComparator(scores);
    // New requests to expect while the queue waits, one Poisson stream per owner at its recent rate, each
    // scored as a request of that owner arriving now: a lighter owner's goes ahead of older ones.
    const byOwner = new Map<string, SessionRow[]>();
    for (const r of o.arrivals ?? []) {
      const k = `${r.organization_id}|${r.project_id ?? ""}|${r.owner_id}`;
      byOwner.set(k, [...(byOwner.get(k) ?? []), r]);
    }
    if (byOwner.size > 0) {
      const fair = o.fair;
      arrivals = {
        scores: Object.fromEntries(scores.map((x) => [x.key, x.score])),
        agingPerMs: settings.agingPerMinute / 60_000,
        streams: [...byOwner.values()].map((rows) => {
          const first = rows[0] as SessionRow;
          const probe = fairRequestOf({ ...requestOf(first), since: o.now.toISOString() }, shareOf(first));
          const [own] = scoreRequests(fair.tree, fair.usage, [probe], o.now.toISOString(), settings);
          return {
            ratePerMs: rows.length / ARRIVAL_WINDOW_MS,
            score: own?.score ?? 0,
            shapes: rows.map((r) => {
              const { key: _, since: __, ...shape } = requestOf(r);
              return shape;
            }),
          };
        }),
      };
    }
  }
  return {
    waiting,
    running,
    history,
    recentStarts: [...o.finished, ...o.holdingRows].flatMap((r) => (r.started_at ? [r.started_at.toISOString()] : [])),
    maxRuntimeMs: Object.fromEntries(o.waitingRows.map((r) => [r.id, o.maxRuntimeMs(r)])),
    compare: (a, b) => Number(borrowed.has(a.key)) - Number(borrowed.has(b.key)) || order(a, b),
    ...(fairShare ? { fairShare } : {}),
    ...(arrivals ? { arrivals } : {}),
  };
}

/** One fair-share reader per database: its usage is read again at most every 30 s, across requests. */
const readers = new WeakMap<Knex, ReturnType<typeof fairShareReader>>();

/**
 * ETAs of the whole queue (a forward simulation of all of it); other shapes are tried only for the
 * sessions in `hintsFor` (a page of the queue), as each costs a simulation of its own.
 */
export async function queueEtas(
  db: Knex,
  sessions: SessionsRuntime | undefined,
  now: Date,
  hintsFor: ReadonlySet<string> = new Set(),
): Promise<Map<string, Eta>> {
  const [waitingRows, holdingRows, finished, clusters, nodes, settings, reclaims] = await Promise.all([
    db("sessions").where({ desired_state: "Running" }).whereIn("phase", WAITING) as Promise<SessionRow[]>,
    db("sessions").whereIn("phase", HOLDING).whereNotNull("cluster_id") as Promise<SessionRow[]>,
    db("sessions")
      .whereNotNull("started_at")
      .where((q) => q.whereNotNull("paused_at").orWhereNotNull("terminated_at"))
      // The latest ended, by when they ended: the length fit takes the runs started since the oldest of
      // them ended as its cohort, which needs every run that ended since then (updated_at moves later).
      .orderByRaw("coalesce(terminated_at, paused_at) desc")
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
    db("capacity_reclaims")
      .whereNull("withdrawn_at")
      .whereNull("resumed_at")
      .select("session_id", "pause_at", "paused_at") as Promise<OpenReclaim[]>,
  ]);
  if (waitingRows.length === 0) return new Map();
  const policies = sessions ? await sessions.catalog.policies().catch(() => []) : [];
  let fair: FairShareView | undefined;
  if (sessions && policies.some((p) => p.spec.fairShare)) {
    const reader = readers.get(db) ?? fairShareReader({ db, sessions });
    readers.set(db, reader);
    fair = await reader(now);
  }
  const arrivals = fair
    ? ((await db("sessions").where("created_at", ">", new Date(now.getTime() - ARRIVAL_WINDOW_MS))) as SessionRow[])
    : [];
  const rows = etaInputOf({
    now,
    waitingRows,
    holdingRows,
    finished,
    reclaims,
    fair,
    arrivals,
    maxRuntimeMs: (r) =>
      reclaimPolicyOf(policies, { organizationId: r.organization_id, projectId: r.project_id, userId: r.owner_id })
        .maxRuntimeMinutes * 60_000,
  });

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
  const offerings =
    sessions && hintsFor.size > 0
      ? (await listObjects(sessions.kube, OfferingKind as unknown as KindDefinition).catch(() => [])).flatMap((o) => {
          const p = OfferingKind.schema.safeParse(o);
          return p.success ? [p.data] : [];
        })
      : [];
  const fleetModels = new Set(nodes.flatMap((n) => (n.gpuModel ? [n.gpuModel] : [])));
  const alternatives: Record<string, Alternative[]> = {};
  for (const [i, r] of waitingRows.entries()) {
    if (!hintsFor.has(r.id)) continue;
    const alts = alternativesFor(r, rows.waiting[i] as PlacementRequest, offerings, policies, fleetModels);
    if (alts.length > 0) alternatives[r.id] = alts;
  }
  const etas = estimateQueue({
    ...rows,
    alternatives,
    now: now.toISOString(),
    clusters: capacity,
    policy: settings.placement.policy,
    nodes,
    seed: 7,
  });
  return new Map(etas.map((e) => [e.key, e]));
}
