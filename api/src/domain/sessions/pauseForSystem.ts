// A pause the system decides (billing, when a wallet cannot cover the next minute): the same path as a
// user's pause — the pod goes, the GPU returns, usage stops, volumes stay — with the reason on the
// session's Ready condition, its Kubernetes Event and the stream (e.g. InsufficientCredits), so the user
// sees why. No caller check: the billing domain decided. A session that is not running, or already
// pausing or ending, is left as it is (answers false).
import { PAUSE_REASON_ANNOTATION, SessionKind, SessionReason } from "@berth/crds";
import { findSessionById } from "../../db/operations/sessions/findSessionById.ts";
import { ENDED_PHASES } from "../../db/operations/sessions/types.ts";
import type { Deps } from "../../deps.ts";
import { Unavailable } from "../../errors.ts";
import { allowedActions } from "./actions.ts";
import { readResource } from "./lookup.ts";
import { sessionPath, sessionsRuntimeOf } from "./runtime.ts";

/** What a system pause reads: the history row and the Session resource (the worker has no more). */
export type SystemPauseDeps = Pick<Deps, "db" | "sessions">;

export async function pauseSessionForSystem(
  deps: SystemPauseDeps,
  sessionId: string,
  reason: string,
): Promise<boolean> {
  const row = await findSessionById(deps.db, sessionId);
  if (!row) return false;
  for (let attempt = 0; attempt < 4; attempt++) {
    const cr = await readResource(deps, row);
    if (!cr || !allowedActions(cr.status?.phase ?? "Pending", cr.spec.desiredState).includes("pause")) return false;
    const res = await sessionsRuntimeOf(deps).kube.request("PATCH", sessionPath(row.namespace, row.cr_name), {
      body: {
        metadata: { resourceVersion: cr.metadata.resourceVersion, annotations: { [PAUSE_REASON_ANNOTATION]: reason } },
        spec: { desiredState: "Paused" },
      },
    });
    if (res.status === 409) continue;
    if (res.status >= 300) throw new Unavailable(`pausing session ${sessionId} failed (${res.status})`);
    SessionKind.schema.parse(res.body);
    await deps.db("sessions").where({ id: sessionId }).update({ desired_state: "Paused" });
    return true;
  }
  return false;
}

/**
 * A member removed from an organization: their sessions there that want to run are paused (the GPU goes
 * back, usage on the organization's wallets stops, volumes stay), reason MemberRemoved. The
 * organization's admins see them still and decide (terminate, or resume for a returning member).
 * Best effort and never throws: the removal stands; a session that cannot be paused now is logged and
 * left to the admins. Callers do not wait for it (the management cluster may be slow or away).
 */
export async function pauseSessionsOfFormerMember(deps: Deps, userId: string, organizationId: string): Promise<number> {
  try {
    // Still in the organization (another project, or the organization itself): nothing to do.
    if (await deps.db("memberships").where({ user_id: userId, organization_id: organizationId }).first("id")) return 0;
    const rows = (await deps
      .db("sessions")
      .where({ owner_id: userId, organization_id: organizationId, desired_state: "Running" })
      .whereNotIn("phase", [...ENDED_PHASES])
      .select("id")) as { id: string }[];
    const paused = await Promise.all(
      rows.map(({ id }) =>
        pauseSessionForSystem(deps, id, SessionReason.MemberRemoved).catch((err: unknown) => {
          deps.log.warn({ err: String(err), session: id }, "could not pause a removed member's session");
          return false;
        }),
      ),
    );
    return paused.filter(Boolean).length;
  } catch (err) {
    deps.log.warn(
      { err: String(err), user: userId, organization: organizationId },
      "could not pause a removed member's sessions",
    );
    return 0;
  }
}
