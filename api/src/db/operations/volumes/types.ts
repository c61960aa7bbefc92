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
}
