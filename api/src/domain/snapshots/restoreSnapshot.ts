// A snapshot restored into a new volume on the snapshot's pool: a volume like any other (owner, quota,
// pool room, name), marked restored_from; the worker makes its first claim from the snapshot on the
// cluster that holds it and marks it restored once that claim binds (api/src/worker/snapshots.ts).
import { findSnapshot } from "../../db/operations/snapshots/snapshots.ts";
import type { Deps } from "../../deps.ts";
import { Conflict, Invalid, NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { createVolume } from "../storage/createVolume.ts";
import type { VolumeView } from "../storage/volumeParts.ts";
import { visibleSnapshot } from "./snapshotParts.ts";

export interface RestoreSnapshotInput {
  name: string;
  size_gb?: number | undefined;
  project_id?: string | undefined;
}

function notReady(id: string, state: string) {
  return new Conflict(
    `snapshot ${id} is ${state}; only a ready snapshot is restored`,
    { snapshot: id, state },
    "snapshot_not_ready",
  );
}

export async function restoreSnapshot(
  deps: Deps,
  principal: Principal,
  volumeId: string,
  snapshotId: string,
  input: RestoreSnapshotInput,
): Promise<VolumeView> {
  const { volume, snapshot } = await visibleSnapshot(deps, principal, volumeId, snapshotId, { manage: true });
  if (snapshot.state !== "ready") throw notReady(snapshotId, snapshot.state);
  const size = input.size_gb ?? snapshot.size_gb;
  if (size < snapshot.size_gb)
    throw new Invalid("the request is invalid", [
      {
        path: ["body", "size_gb"],
        message: `at least the snapshot's ${snapshot.size_gb} GB`,
        code: "too_small",
      },
    ]);
  return createVolume(
    deps,
    principal,
    {
      name: input.name,
      size_gb: size,
      pool: snapshot.pool,
      project_id: input.project_id,
      organization_id: volume.row.organization_id,
    },
    {
      snapshotId,
      async check(tx) {
        const locked = await findSnapshot(tx, snapshotId, { forUpdate: true });
        if (!locked) throw new NotFound("snapshot", snapshotId);
        if (locked.state !== "ready") throw notReady(snapshotId, locked.state);
      },
    },
  );
}
