// A volume deleted: marked, kept through a grace period (restoreVolume.ts), then purged by the operator.

import { KubeError } from "@berth/controllers/kube";
import { ANNOTATIONS, sessionIdOf, VolumeKind } from "@berth/crds";
import { updateVolume } from "../../db/operations/volumes/updateVolume.ts";
import type { Deps } from "../../deps.ts";
import { Conflict } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { storageRuntimeOf, unreachable, volumePath } from "./runtime.ts";
import { storageSettings } from "./settings.ts";
import { manageable, mountsOf, priced, refuseLocked, type VolumeView } from "./volumeParts.ts";

/**
 * Deletes a volume: its claim goes at once (the worker releases it), its data after the grace period
 * (storage settings, default 24 h), until which its owner may restore it. The row keeps `deleted_at` and
 * `purge_after`; the resource stays, marked with ANNOTATIONS.volumePurgeAfter, so nothing mounts it.
 */
export async function deleteVolume(deps: Deps, principal: Principal, id: string): Promise<VolumeView> {
  const { row, cr } = await manageable(deps, principal, id);
  refuseLocked(cr, id);
  const mounts = await mountsOf(deps, row);
  if (mounts.length > 0)
    throw new Conflict(
      `volume ${id} is mounted by ${mounts.length} session(s)`,
      { volume: id, sessions: mounts.map((m) => sessionIdOf(m.session)) },
      "volume_in_use",
    );
  const now = deps.clock.now();
  const grace = (await storageSettings(deps.db)).delete_grace_hours;
  const purgeAfter = new Date(now.getTime() + grace * 3_600_000);
  const res = await storageRuntimeOf(deps)
    .kube.request("PATCH", volumePath(row.namespace, row.cr_name), {
      body: { metadata: { annotations: { [ANNOTATIONS.volumePurgeAfter]: purgeAfter.toISOString() } } },
    })
    .catch(unreachable("deleting a volume"));
  if (res.status >= 300 && res.status !== 404)
    throw new KubeError("PATCH", volumePath(row.namespace, row.cr_name), res.status, res.body);
  const updated = await updateVolume(deps.db, id, { deleted_at: now, purge_after: purgeAfter, updated_at: now });
  return priced(deps, {
    row: updated ?? row,
    cr: res.status < 300 ? VolumeKind.schema.parse(res.body) : cr,
    mounts: [],
  });
}
