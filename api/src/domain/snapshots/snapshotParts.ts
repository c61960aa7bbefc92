// What the snapshot verbs share (one file per verb beside this one). A snapshot is a row in Postgres
// (lists, quota, billing) that the worker turns into a VolumeSnapshot on the GPU cluster holding the
// volume's claim and reads back (api/src/worker/snapshots.ts); the API never writes a snapshot's state
// beyond asking for it (creating) or for its end (deleting). Who may see or act on a snapshot is who
// may see or manage its volume (domain/storage/access.ts): another organization's gets 404.

import { findSnapshot } from "../../db/operations/snapshots/snapshots.ts";
import type { SnapshotRow } from "../../db/operations/snapshots/types.ts";
import type { Deps } from "../../deps.ts";
import { NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { manageable, visible } from "../storage/volumeParts.ts";

/** The snapshot of a volume the caller sees; 404 unless both exist and belong together. */
export async function visibleSnapshot(
  deps: Deps,
  principal: Principal,
  volumeId: string,
  snapshotId: string,
  opts: { manage?: boolean } = {},
): Promise<{ volume: Awaited<ReturnType<typeof visible>>; snapshot: SnapshotRow }> {
  const volume = opts.manage ? await manageable(deps, principal, volumeId) : await visible(deps, principal, volumeId);
  const snapshot = await findSnapshot(deps.db, snapshotId);
  if (!snapshot || snapshot.volume_id !== volumeId) throw new NotFound("snapshot", snapshotId);
  return { volume, snapshot };
}
