// One view of a session for presenters and events: the history row, overlaid with the live Session
// resource when there is one (the resource is the truth; the row may lag it by a reconcile).
import { HOLDING_PHASES } from "@berth/controllers";
import {
  type Condition,
  fractionLabel,
  gpuOccupancy,
  KEEP_RUNNING_ANNOTATION,
  type Session,
  type SessionPhase,
  shareOfRow,
} from "@berth/crds";
import type { SessionRow } from "./types.ts";

export interface SessionView {
  id: string;
  crName: string;
  namespace: string;
  ownerId: string;
  organizationId: string;
  projectId: string | null;
  displayName: string | null;
  offering: string;
  preset: string;
  image: string;
  gpuModel: string;
  gpuCount: number;
  /** "1" for whole cards, else "1/2", "1/4", "1/8" of one card (docs/dev/gpu-sharing.md). */
  gpuFraction: string;
  /** GPU memory a slice guarantees (MiB); null for whole cards. */
  gpuSliceMemoryMib: number | null;
  gpuMigProfile: string | null;
  /** What quotas count: whole GPUs, or the slice's share of one. */
  gpuOccupancy: number;
  /** Card UUIDs the session holds, while it holds them (clusters with a sharing layer). */
  gpuCards: string[] | null;
  hourlyCreditRate: string;
  clusterPin: string | null;
  clusterId: string | null;
  node: string | null;
  phase: string;
  desiredState: string;
  priority: number;
  queue: { position: number; reason: string } | null;
  reason: string | null;
  message: string | null;
  conditions?: Condition[];
  connectPaths: { lab: string; terminal: string; code: string } | null;
  restarts: number;
  createdAt: Date;
  updatedAt: Date;
  queuedAt: Date | null;
  scheduledAt: Date | null;
  startedAt: Date | null;
  pausedAt: Date | null;
  terminatedAt: Date | null;
  resourceDeleted: boolean;
  /** Warnings out (status.reclaim of the current run period), withdrawn at once by a later keep-running. */
  idleWarning: { since: Date; deadline: Date } | null;
  runtimeWarning: { deadline: Date } | null;
  /** docs/dev/fair-share.md: fixed at creation, with the share of the rate it pays (thousandths). */
  capacityClass: "guaranteed" | "borrowed";
  ratePermille: number;
  /** A borrowed session chosen to give its GPUs back: warned, and paused at pauseAt (status.capacityReclaim). */
  capacityReclaim: {
    noticeAt: Date;
    pauseAt: Date;
    forSessionId: string;
    reason: string;
    pausedAt: Date | null;
  } | null;
}

const date = (s: string | undefined, fallback: Date | null): Date | null => (s ? new Date(s) : fallback);

export function viewFromRow(row: SessionRow): SessionView {
  return {
    id: row.id,
    crName: row.cr_name,
    namespace: row.namespace,
    ownerId: row.owner_id,
    organizationId: row.organization_id,
    projectId: row.project_id,
    displayName: row.display_name,
    offering: row.offering,
    preset: row.preset,
    image: row.image,
    gpuModel: row.gpu_model,
    gpuCount: row.gpu_count,
    gpuFraction: fractionLabel(row.gpu_slices_per_card ?? undefined),
    gpuSliceMemoryMib: row.gpu_slice_memory_mib ?? null,
    gpuMigProfile: row.gpu_mig_profile ?? null,
    gpuOccupancy: gpuOccupancy(row.gpu_count, row.gpu_slices_per_card ?? undefined, shareOfRow(row)),
    gpuCards: row.gpu_cards ?? null,
    hourlyCreditRate: row.hourly_credit_rate,
    clusterPin: row.cluster_pin,
    clusterId: row.cluster_id,
    node: row.node,
    phase: row.phase,
    desiredState: row.desired_state,
    priority: row.priority,
    queue:
      row.phase === "Queued" && row.queue_position !== null
        ? { position: row.queue_position, reason: row.message ?? "" }
        : null,
    reason: row.reason,
    message: row.message,
    connectPaths:
      row.phase === "Running"
        ? {
            lab: `/proxy/${row.cr_name}/lab`,
            terminal: `/proxy/${row.cr_name}/terminal`,
            code: `/proxy/${row.cr_name}/code/`,
          }
        : null,
    // Restarts begun (the mirror's restartCount), not the annotation's requests, here and for a resource's
    // view alike: "Running, 1 restart" before the worker touched the pod would claim what has not happened.
    restarts: row.mirror_restarts,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    queuedAt: row.queued_at,
    scheduledAt: row.scheduled_at,
    startedAt: row.started_at,
    pausedAt: row.paused_at,
    terminatedAt: row.terminated_at,
    resourceDeleted: row.resource_deleted_at !== null,
    idleWarning: null,
    runtimeWarning: null,
    capacityClass: row.capacity_class ?? "guaranteed",
    ratePermille: row.rate_permille ?? 1000,
    capacityReclaim: null,
  };
}

/** The warnings status.reclaim holds for the current run period (the reclaim loop writes them). */
function warningsOf(cr: Session): Pick<SessionView, "idleWarning" | "runtimeWarning"> {
  const r = cr.status?.reclaim;
  // Times compared as instants: the status writes seconds (…:54Z), the reclaim loop milliseconds (…:54.000Z).
  const period = Date.parse(r?.period ?? "");
  if (!r || period !== Date.parse(cr.status?.startedAt ?? "") || cr.status?.phase !== "Running")
    return { idleWarning: null, runtimeWarning: null };
  let keptAt = 0;
  try {
    const k = JSON.parse(cr.metadata.annotations?.[KEEP_RUNNING_ANNOTATION] ?? "{}") as {
      period?: string;
      at?: string;
    };
    if (Date.parse(k.period ?? "") === period && k.at) keptAt = Date.parse(k.at) || 0;
  } catch {
    keptAt = 0;
  }
  const idle = r.idle && r.idle.warned.length > 0 && keptAt <= Date.parse(r.idle.since) ? r.idle : undefined;
  return {
    idleWarning: idle ? { since: new Date(idle.since), deadline: new Date(idle.deadline) } : null,
    runtimeWarning: r.runtime && r.runtime.warned.length > 0 ? { deadline: new Date(r.runtime.deadline) } : null,
  };
}

/** The condition that best says why the session is where it is. */
export function leadingCondition(conditions: readonly Condition[] | undefined): Condition | undefined {
  const cs = conditions ?? [];
  return (
    cs.find((c) => c.type === "Ready" && c.status !== "True") ??
    cs.find((c) => c.type === "Scheduled" && c.status !== "True") ??
    cs.find((c) => c.type === "Ready")
  );
}

export function viewFromResource(row: SessionRow, cr: Session): SessionView {
  const v = viewFromRow(row);
  const st = cr.status ?? {};
  const lead = leadingCondition(st.conditions);
  const phase = st.phase ?? "Pending";
  return {
    ...v,
    clusterId: st.cluster ?? (phase === "Paused" || phase === "Terminated" ? v.clusterId : null),
    node: st.node ?? null,
    // The cards the operator reports the running pod holds, else those placement chose for it.
    gpuCards:
      st.gpuAssignment && HOLDING_PHASES.includes(phase as SessionPhase)
        ? (st.gpuDevices ?? st.gpuAssignment.cards)
        : null,
    phase,
    desiredState: cr.spec.desiredState,
    priority: cr.spec.priority,
    queue: st.queue ?? null,
    reason: lead?.reason ?? null,
    message: lead?.message ?? null,
    conditions: st.conditions ?? [],
    connectPaths:
      st.connect?.lab && st.connect.terminal && st.connect.code
        ? { lab: st.connect.lab, terminal: st.connect.terminal, code: st.connect.code }
        : null,
    queuedAt: date(st.queuedAt, v.queuedAt),
    scheduledAt: date(st.scheduledAt, v.scheduledAt),
    startedAt: date(st.startedAt, v.startedAt),
    pausedAt: date(st.pausedAt, v.pausedAt),
    terminatedAt: date(st.terminatedAt, v.terminatedAt),
    resourceDeleted: false,
    ...warningsOf(cr),
    capacityReclaim: st.capacityReclaim
      ? {
          noticeAt: new Date(st.capacityReclaim.noticeAt),
          pauseAt: new Date(st.capacityReclaim.pauseAt),
          forSessionId: st.capacityReclaim.for,
          reason: st.capacityReclaim.reason,
          pausedAt: st.capacityReclaim.pausedAt ? new Date(st.capacityReclaim.pausedAt) : null,
        }
      : null,
  };
}
