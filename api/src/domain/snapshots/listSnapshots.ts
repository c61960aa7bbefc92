import { listSnapshotsOfVolume } from "../../db/operations/snapshots/snapshots.ts";
import type { SnapshotRow } from "../../db/operations/snapshots/types.ts";
import type { Deps } from "../../deps.ts";
import type { Principal } from "../identity/principal.ts";
import { visible } from "../storage/volumeParts.ts";

/** A volume's snapshots, newest first, for whoever sees the volume. */
export async function listSnapshots(
  deps: Deps,
  principal: Principal,
  volumeId: string,
  page: { page: number; size: number },
): Promise<{ rows: SnapshotRow[]; total: number }> {
  await visible(deps, principal, volumeId);
  return listSnapshotsOfVolume(deps.db, volumeId, { limit: page.size, offset: (page.page - 1) * page.size });
}
