// A volume renamed or grown (never shrunk; a locked one is not resized), within quota and the pool's room.

import { lockVolumeTotals } from "../../db/operations/volumes/provisioned.ts";
import { updateVolume } from "../../db/operations/volumes/updateVolume.ts";
import { sqlState, UNIQUE_VIOLATION } from "../../db/sqlstate.ts";
import type { Deps } from "../../deps.ts";
import { Invalid, NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { readPool } from "./pools.ts";
import {
  checkRoom,
  manageable,
  mountsOf,
  nameTaken,
  patchCr,
  priced,
  refuseLocked,
  type VolumeView,
} from "./volumeParts.ts";

export async function updateVolumeOf(
  deps: Deps,
  principal: Principal,
  id: string,
  input: { name?: string | undefined; size_gb?: number | undefined },
): Promise<VolumeView> {
  const { row, cr } = await manageable(deps, principal, id);
  if (input.size_gb !== undefined && input.size_gb !== row.size_gb) {
    refuseLocked(cr, id);
    if (input.size_gb < row.size_gb)
      throw new Invalid("the request is invalid", [
        {
          path: ["body", "size_gb"],
          message: `a volume only grows: it has ${row.size_gb} GB; give more`,
          code: "too_small",
        },
      ]);
  }
  const grow = input.size_gb !== undefined && input.size_gb > row.size_gb ? input.size_gb - row.size_gb : 0;
  const now = deps.clock.now();
  const updated = await deps.db
    .transaction(async (tx) => {
      if (grow > 0) {
        await lockVolumeTotals(tx, row.owner_kind, row.owner_id, row.pool);
        const pool = await readPool(deps, row.pool);
        if (pool) await checkRoom(deps, tx, row, pool, grow);
      }
      return updateVolume(tx, id, {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(grow > 0 ? { size_gb: input.size_gb } : {}),
        updated_at: now,
      });
    })
    .catch((e: unknown) => {
      throw sqlState(e) === UNIQUE_VIOLATION ? nameTaken(input.name ?? "") : e;
    });
  if (!updated) throw new NotFound("volume", id);
  try {
    const next = await patchCr(deps, row, {
      ...(input.name !== undefined ? { displayName: input.name } : {}),
      ...(grow > 0 ? { sizeGb: updated.size_gb } : {}),
    });
    return priced(deps, { row: updated, cr: next, mounts: await mountsOf(deps, updated) });
  } catch (e) {
    // The resource keeps the old figures: so does the row.
    await updateVolume(deps.db, id, { name: row.name, size_gb: row.size_gb, updated_at: now });
    throw e;
  }
}
