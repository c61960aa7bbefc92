// A volume locked or unlocked by an administrator: a locked volume is not resized, deleted or mounted
// (409 volume_locked, docs/dev/storage.md).

import type { Deps } from "../../deps.ts";
import { Forbidden } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { scopeOf } from "../identity/scope.ts";
import { canLockVolume } from "./access.ts";
import { mountsOf, patchCr, priced, type VolumeView, visible } from "./volumeParts.ts";

export async function lockVolume(
  deps: Deps,
  principal: Principal,
  id: string,
  lock: { locked: boolean; reason?: string | undefined },
): Promise<VolumeView> {
  const { row } = await visible(deps, principal, id);
  if (!canLockVolume(scopeOf(principal), row)) throw new Forbidden("only administrators lock and unlock volumes");
  const cr = await patchCr(deps, row, { locked: lock.locked, lockReason: lock.locked ? (lock.reason ?? null) : null });
  return priced(deps, { row, cr, mounts: await mountsOf(deps, row) });
}
