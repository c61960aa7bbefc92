// A resume the system asks for (fair share: a borrowed session paused to give its GPUs back asks to run
// again, api/src/domain/fairshare/reclaimPass.ts). It passes the same gate as a person's resume
// (`checkResume`: limits, and wallets that cover a minimum run), under the owner's lock, with the intent in
// the row before the resource changes, as `act` does. Refused, the session stays paused and its owner is
// told why once per pause (the dedupe key), in the words a refused resume of their own would have.
import type { Session } from "@berth/crds";
import { lockOwner } from "../../db/operations/sessions/countLiveForOwner.ts";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import type { Deps } from "../../deps.ts";
import { QuotaExceeded } from "../../errors.ts";
import { notify } from "../notifications/notify.ts";
import { checkResume } from "./resumeSession.ts";
import { sessionPath, sessionsRuntimeOf } from "./runtime.ts";

export type SystemResumeDeps = Pick<Deps, "db" | "sessions" | "credits" | "clock">;

export type SystemResume = { resumed: true } | { resumed: false; refusal?: QuotaExceeded };

/**
 * `s` is the resource as the caller read it: the write is conditional on its resourceVersion (a conflict
 * answers `{ resumed: false }`; the caller's next pass reads it again).
 */
export async function resumeSessionForSystem(
  deps: SystemResumeDeps,
  row: SessionRow,
  s: Session,
  o: { title: string; dedupeKey: string },
): Promise<SystemResume> {
  try {
    await deps.db.transaction(async (tx) => {
      await lockOwner(tx, row.owner_id);
      await checkResume(deps, tx, row);
      await tx("sessions").where({ id: row.id }).update({ desired_state: "Running" });
    });
  } catch (err) {
    if (!(err instanceof QuotaExceeded)) throw err;
    const name = row.display_name ?? row.id;
    await notify(deps.db, {
      userId: row.owner_id,
      organizationId: row.organization_id,
      kind: "session.resume_refused",
      title: o.title,
      body: `Your session ${name} stays paused: ${err.message}. Resume it yourself once that changes; its volumes are kept.`,
      data: { session_id: row.id, refusal: { code: err.code, message: err.message, ...err.details } },
      dedupeKey: o.dedupeKey,
      at: deps.clock.now(),
    });
    return { resumed: false, refusal: err };
  }
  const res = await sessionsRuntimeOf(deps).kube.request("PATCH", sessionPath(row.namespace, row.cr_name), {
    body: { metadata: { resourceVersion: s.metadata.resourceVersion }, spec: { desiredState: "Running" } },
  });
  if (res.status >= 300) {
    // Not changed: the row gets the resource's intent back (else it would hold the owner's limits).
    await deps.db("sessions").where({ id: row.id, desired_state: "Running" }).update({ desired_state: "Paused" });
    if (res.status === 409 || res.status === 404) return { resumed: false };
    throw new Error(`resuming ${row.id}: ${res.status}`);
  }
  return { resumed: true };
}
