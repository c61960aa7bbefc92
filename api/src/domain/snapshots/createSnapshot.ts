// A snapshot asked for: checked (who, the volume quiet, the quota), then a row in state `creating`; the
// worker makes the VolumeSnapshot and records what the driver says (api/src/worker/snapshots.ts).
import { holdsVolumes } from "@berth/controllers";
import { newSnapshotId, type Session, sessionIdOf, snapshotObjectName } from "@berth/crds";
import { insertSnapshot } from "../../db/operations/snapshots/snapshots.ts";
import type { SnapshotRow } from "../../db/operations/snapshots/types.ts";
import { lockVolumeTotals } from "../../db/operations/volumes/provisioned.ts";
import { sqlState, UNIQUE_VIOLATION } from "../../db/sqlstate.ts";
import type { Deps } from "../../deps.ts";
import { Conflict } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { namespacedSessionsPath, storageRuntimeOf, unreachable } from "../storage/runtime.ts";
import { checkQuota, manageable } from "../storage/volumeParts.ts";

/**
 * Sessions that may be writing to the volume: they mount it read-write and hold it (not paused, failed or
 * terminated: holdsVolumes). A paused session has no pod, so its files are still.
 */
async function writers(deps: Deps, namespace: string, crName: string): Promise<string[]> {
  const list = await storageRuntimeOf(deps)
    .kube.json<{ items: Session[] }>("GET", namespacedSessionsPath(namespace))
    .catch(unreachable("listing sessions"));
  return list.items
    .filter((s) => holdsVolumes(s) && s.spec.volumes.some((v) => v.volume === crName && !v.readOnly))
    .map((s) => sessionIdOf(s.metadata.name as string));
}

export async function createSnapshot(
  deps: Deps,
  principal: Principal,
  volumeId: string,
  input: { name: string },
): Promise<SnapshotRow> {
  const { row } = await manageable(deps, principal, volumeId);
  // Refused rather than paused for the member: a CSI snapshot of a filesystem in use is only crash
  // consistent, and pausing someone's session behind their back loses their kernel state
  // (docs/dev/storage.md, "Snapshots").
  const busy = await writers(deps, row.namespace, row.cr_name);
  if (busy.length > 0)
    throw new Conflict(
      `volume ${volumeId} is mounted read-write by ${busy.length} running session(s); pause them first`,
      { volume: volumeId, sessions: busy },
      "volume_mounted",
    );
  const id = newSnapshotId();
  const now = deps.clock.now();
  return deps.db
    .transaction(async (tx) => {
      await lockVolumeTotals(tx, row.owner_kind, row.owner_id, row.pool);
      await checkQuota(deps, tx, row, row.size_gb);
      return insertSnapshot(tx, {
        id,
        volume_id: row.id,
        organization_id: row.organization_id,
        owner_kind: row.owner_kind,
        owner_id: row.owner_id,
        name: input.name,
        pool: row.pool,
        size_gb: row.size_gb,
        state: "creating",
        cluster_id: null,
        k8s_name: snapshotObjectName(id),
        created_by: principal.userId,
        created_at: now,
        updated_at: now,
      });
    })
    .catch((e: unknown) => {
      throw sqlState(e) === UNIQUE_VIOLATION
        ? new Conflict(
            `volume ${volumeId} already has a snapshot named ${input.name}`,
            { name: input.name },
            "already_exists",
          )
        : e;
    });
}
