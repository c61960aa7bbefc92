// Resume: placed again (maybe on another cluster, unless pinned or held by a volume), after the same
// quota gate as a creation: a paused session does not count, so bringing it back must fit. One gate for
// every resume: a person's here, the system's (a reclaimed borrowed session, resumeForSystem.ts) too.

import { gpuOccupancy, shareOfRow } from "@berth/crds";
import type { Knex } from "knex";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import type { SessionView } from "../../db/operations/sessions/view.ts";
import type { Deps } from "../../deps.ts";
import { QuotaExceeded } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { act } from "./act.ts";
import { checkQuota, type QuotaDeps } from "./checkQuota.ts";
import { sessionsRuntimeOf } from "./runtime.ts";

/**
 * The resume gate, inside the transaction holding the owner's lock: the offering must still exist, then
 * the create's limits and billing's door (its wallets cover a minimum run at its rate). Throws QuotaExceeded.
 */
export async function checkResume(deps: QuotaDeps, tx: Knex.Transaction, row: SessionRow): Promise<void> {
  const offering = await sessionsRuntimeOf(deps).catalog.offering(row.offering);
  if (!offering)
    throw new QuotaExceeded(`the offering ${row.offering} no longer exists`, {
      limit: "offering",
      requested: row.offering,
    });
  await checkQuota(deps, tx, {
    kind: "resume",
    ownerId: row.owner_id,
    organizationId: row.organization_id,
    projectId: row.project_id,
    offering,
    gpuCount: row.gpu_count,
    gpuOccupancy: gpuOccupancy(row.gpu_count, row.gpu_slices_per_card ?? undefined, shareOfRow(row)),
    sessionId: row.id,
    capacityClass: row.capacity_class,
  });
}

export function resumeSession(deps: Deps, principal: Principal, id: string): Promise<SessionView> {
  return act(
    deps,
    principal,
    id,
    {
      action: "resume",
      inLock: (tx, _cr, row) => checkResume(deps, tx, row),
    },
    () => ({ spec: { desiredState: "Running" } }),
  );
}
