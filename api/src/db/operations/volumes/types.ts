export interface VolumeRow {
  id: string;
  organization_id: string;
  owner_kind: "user" | "project";
  owner_id: string;
  name: string;
  size_gb: number;
  pool: string;
  namespace: string;
  cr_name: string;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  /** Deleted: when its data goes (until then the owner may undo the delete). */
  purge_after: Date | null;
  /** Made from this snapshot (docs/dev/storage.md, "Snapshots"). */
  restored_from?: string | null;
  /** When its claim bound with the snapshot's data; null while it is being restored. */
  restored_at?: Date | null;
}
