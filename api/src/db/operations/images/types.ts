export type PrivateImageState = "importing" | "building" | "ready" | "failed";
/** The states that hold one of a member's slots (api/src/domain/images/limits.ts). */
export const SLOT_STATES: readonly PrivateImageState[] = ["importing", "building", "ready"];

export interface PrivateImageRow {
  id: string;
  owner_id: string;
  organization_id: string;
  source: "import" | "build";
  source_reference: string | null;
  display_name: string;
  kind: "jupyterlab" | "code-server" | "terminal";
  repository: string;
  tag: string;
  state: PrivateImageState;
  failure_code: string | null;
  failure_reason: string | null;
  digest: string | null;
  /** bigint columns come back as strings from pg. */
  size_bytes: string | null;
  bytes_total: string | null;
  bytes_copied: string;
  claimed_by: string | null;
  claimed_until: Date | null;
  attempts: number;
  created_at: Date;
  updated_at: Date;
  ready_at: Date | null;
}

export type BuildState = "queued" | "running" | "succeeded" | "failed" | "cancelled";
export const ACTIVE_BUILD_STATES: readonly BuildState[] = ["queued", "running"];

export interface ImageBuildRow {
  id: string;
  owner_id: string;
  organization_id: string;
  image_id: string;
  input_hash: string;
  dockerfile: string;
  base_image: string | null;
  base_reference: string | null;
  state: BuildState;
  failure_reason: string | null;
  cluster_id: string;
  job_name: string;
  reported_digest: string | null;
  cancel_requested: boolean;
  log_bytes: number;
  log_truncated: boolean;
  reused: boolean;
  created_at: Date;
  job_created_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
  /** When the worker wrote the ImageBuild resource to the build cluster. */
  dispatched_at: Date | null;
  /** What the operator last reported of the Job: Pending | Running | Succeeded | Failed. */
  job_phase: string | null;
  job_message: string | null;
  /** The newest kubelet timestamp of a stored log line (normalised), and how many stored lines carry it. */
  log_cursor_at: string | null;
  log_cursor_n: number;
}
