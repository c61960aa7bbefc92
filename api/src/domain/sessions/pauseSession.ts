// Pause: the pod is deleted (its GPU returns and usage stops); volumes and the session's record stay.
// When someone other than the owner pauses it (an administrator), the owner is told why.

import { PAUSE_REASON_ANNOTATION, SessionReason } from "@berth/crds";
import type { SessionView } from "../../db/operations/sessions/view.ts";
import type { Deps } from "../../deps.ts";
import type { Principal } from "../identity/principal.ts";
import { notify } from "../notifications/notify.ts";
import { act } from "./act.ts";

export async function pauseSession(deps: Deps, principal: Principal, id: string): Promise<SessionView> {
  const view = await act(deps, principal, id, { action: "pause" }, () => ({
    spec: { desiredState: "Paused" },
    annotations: { [PAUSE_REASON_ANNOTATION]: SessionReason.PausedByUser },
  }));
  if (view.ownerId !== principal.userId)
    await notify(deps.db, {
      userId: view.ownerId,
      organizationId: view.organizationId,
      kind: "session.paused",
      title: "Session paused by an administrator",
      body: `Your session ${view.displayName ?? view.id} was paused by ${principal.email}. Its volumes are kept; resume it when you need it.`,
      data: { session_id: view.id, reason: "administrator", by: principal.userId },
      dedupeKey: `session.paused:${view.id}`,
      at: deps.clock.now(),
    });
  return view;
}
