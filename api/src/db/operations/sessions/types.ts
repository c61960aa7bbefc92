// A row of `sessions` (migration 20261122000004): the history mirror of a Session resource.
import type { InterimStatus } from "@berth/crds";

export interface SessionRow {
  id: string;
  cr_name: string;
  namespace: string;
  owner_id: string;
  organization_id: string;
  project_id: string | null;
  display_name: string | null;
  offering: string;
  preset: string;
  image: string;
  gpu_model: string;
  gpu_count: number;
  hourly_credit_rate: string;
  /** The offering's GPUs at creation: hourly_credit_rate is for all of them. */
  offering_gpu_count: number;
  /** A slice of one card: the offering's slices per card (docs/dev/gpu-sharing.md); null: whole cards. */
  gpu_slices_per_card: number | null;
  gpu_slice_memory_mib: number | null;
  /** A MIG instance: its profile and its share of a card (num/den); null otherwise. */
  gpu_mig_profile: string | null;
  gpu_share_num: number | null;
  gpu_share_den: number | null;
  /** Card UUIDs placement chose, while the session holds them; null otherwise or without a sharing layer. */
  gpu_cards: string[] | null;
  cluster_pin: string | null;
  cluster_id: string | null;
  placed_clusters: string[];
  node: string | null;
  phase: string;
  desired_state: string;
  priority: number;
  queue_position: number | null;
  reason: string | null;
  message: string | null;
  mirror_revision: number;
  /** A status the worker keeps off the resource (an interim phase) and the resource status it follows. */
  interim_status: InterimStatus | null;
  mirror_restarts: number;
  created_at: Date;
  updated_at: Date;
  queued_at: Date | null;
  scheduled_at: Date | null;
  started_at: Date | null;
  paused_at: Date | null;
  terminated_at: Date | null;
  resource_deleted_at: Date | null;
  /** Fixed at creation (docs/dev/fair-share.md). */
  capacity_class: "guaranteed" | "borrowed";
  /** Thousandths of the rate it pays: the offering's borrowed multiplier for a borrowed session, else 1000. */
  rate_permille: number;
}

/** Phases that no longer hold or want anything: they count for nothing (policies, deregistration). */
export const ENDED_PHASES = ["Terminated", "Failed"] as const;

export interface SessionEventRow {
  seq: string; // bigint
  /** null on a `notification.created` row (owner_id is then the notified user). */
  session_id: string | null;
  owner_id: string;
  organization_id: string | null;
  project_id: string | null;
  type: string;
  payload: Record<string, unknown>;
  created_at: Date;
}
