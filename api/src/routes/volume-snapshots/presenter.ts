import type { SnapshotRow } from "../../db/operations/snapshots/types.ts";
import { isoTimestamp as iso } from "../../http/timestamp.ts";

export function presentSnapshot(s: SnapshotRow) {
  return {
    id: s.id,
    name: s.name,
    volume_id: s.volume_id,
    state: s.state,
    size_gb: s.size_gb,
    restore_size_bytes: s.restore_size_bytes === null ? null : String(s.restore_size_bytes),
    failure: s.failure,
    cluster: s.cluster_id,
    created_by: s.created_by,
    created_at: iso(s.created_at),
    ready_at: s.ready_at ? iso(s.ready_at) : null,
  };
}
