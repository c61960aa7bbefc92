export type SnapshotState = "creating" | "ready" | "failed" | "deleting";

export interface SnapshotRow {
  id: string;
  volume_id: string;
  organization_id: string;
  owner_kind: "user" | "project";
  owner_id: string;
  name: string;
  pool: string;
  size_gb: number;
  state: SnapshotState;
  cluster_id: string | null;
  k8s_name: string;
  restore_size_bytes: string | null;
  failure: string | null;
  created_by: string;
  created_at: Date;
  ready_at: Date | null;
  failed_at: Date | null;
  updated_at: Date;
  deleted_at: Date | null;
}
