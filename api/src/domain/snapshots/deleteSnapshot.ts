// A snapshot's delete is asked here (state `deleting`); the worker deletes its VolumeSnapshot and then
// ends the row (deleted_at), which stops its billing and frees its quota.
import { findSnapshot, restoringFrom, updateSnapshot } from "../../db/operations/snapshots/snapshots.ts";
import type { SnapshotRow } from "../../db/operations/snapshots/types.ts";
import type { Deps } from "../../deps.ts";
import { Conflict, NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { visibleSnapshot } from "./snapshotParts.ts";

export async function deleteSnapshot(
  deps: Deps,
  principal: Principal,
  volumeId: string,
  snapshotId: string,
): Promise<SnapshotRow> {
  await visibleSnapshot(deps, principal, volumeId, snapshotId, { manage: true });
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    // The row lock orders this against a restore, which takes it before making its volume.
    const snap = await findSnapshot(tx, snapshotId, { forUpdate: true });
    if (!snap) throw new NotFound("snapshot", snapshotId);
    if (snap.state === "deleting") return snap;
    const volumes = await restoringFrom(tx, snapshotId);
    if (volumes.length > 0)
      throw new Conflict(
        `snapshot ${snapshotId} is being restored into ${volumes.length} volume(s)`,
        { snapshot: snapshotId, volumes },
        "snapshot_restoring",
      );
    return (await updateSnapshot(tx, snapshotId, { state: "deleting", updated_at: now })) ?? snap;
  });
}
