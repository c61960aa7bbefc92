// A deleted volume brought back within its grace period.

import { KubeError } from "@berth/controllers/kube";
import { ANNOTATIONS, VolumeKind } from "@berth/crds";
import { findDeletedVolumeById } from "../../db/operations/volumes/findVolumeById.ts";
import { lockVolumeTotals } from "../../db/operations/volumes/provisioned.ts";
import { updateVolume } from "../../db/operations/volumes/updateVolume.ts";
import { sqlState, UNIQUE_VIOLATION } from "../../db/sqlstate.ts";
import type { Deps } from "../../deps.ts";
import { Conflict, Forbidden, NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { scopeOf } from "../identity/scope.ts";
import { canManageVolume, canSeeVolume } from "./access.ts";
import { readPool } from "./pools.ts";
import { storageRuntimeOf, unreachable, volumePath } from "./runtime.ts";
import { checkQuota, nameTaken, priced, type VolumeView } from "./volumeParts.ts";

/** Undoes a delete within its grace period: the volume is as it was (its name must still be free). */
export async function restoreVolume(deps: Deps, principal: Principal, id: string): Promise<VolumeView> {
  const row = await findDeletedVolumeById(deps.db, id);
  const scope = scopeOf(principal);
  if (!row || !canSeeVolume(scope, row, undefined)) throw new NotFound("volume", id);
  if (!canManageVolume(scope, row)) throw new Forbidden("only the volume's owner or an administrator may restore it");
  const now = deps.clock.now();
  if (!row.purge_after || row.purge_after.getTime() <= now.getTime())
    throw new Conflict(
      `volume ${id} was deleted and its grace period ended${row.purge_after ? ` at ${row.purge_after.toISOString()}` : ""}; its data is gone`,
      { volume: id, purge_after: row.purge_after?.toISOString() ?? null },
      "volume_purged",
    );
  const restored = await deps.db
    .transaction(async (tx) => {
      await lockVolumeTotals(tx, row.owner_kind, row.owner_id, row.pool);
      // Quota again: the owner may have made other volumes meanwhile (pool room: the data never left).
      const pool = await readPool(deps, row.pool);
      if (pool) await checkQuota(deps, tx, row, row.size_gb);
      return updateVolume(tx, id, { deleted_at: null, purge_after: null, updated_at: now });
    })
    .catch((e: unknown) => {
      throw sqlState(e) === UNIQUE_VIOLATION ? nameTaken(row.name) : e;
    });
  const res = await storageRuntimeOf(deps)
    .kube.request("PATCH", volumePath(row.namespace, row.cr_name), {
      body: { metadata: { annotations: { [ANNOTATIONS.volumePurgeAfter]: null } } },
    })
    .catch(unreachable("restoring a volume"));
  if (res.status >= 300) {
    await updateVolume(deps.db, id, { deleted_at: row.deleted_at, purge_after: row.purge_after, updated_at: now });
    throw new KubeError("PATCH", volumePath(row.namespace, row.cr_name), res.status, res.body);
  }
  return priced(deps, { row: restored ?? row, cr: VolumeKind.schema.parse(res.body), mounts: [] });
}
