// Pause: the pod is deleted (its GPU returns and usage stops); volumes and the session's record stay.

import { PAUSE_REASON_ANNOTATION, SessionReason } from "@berth/crds";
import type { SessionView } from "../../db/operations/sessions/view.ts";
import type { Deps } from "../../deps.ts";
import type { Principal } from "../identity/principal.ts";
import { act } from "./act.ts";

export function pauseSession(deps: Deps, principal: Principal, id: string): Promise<SessionView> {
  return act(deps, principal, id, { action: "pause" }, () => ({
    spec: { desiredState: "Paused" },
    annotations: { [PAUSE_REASON_ANNOTATION]: SessionReason.PausedByUser },
  }));
}
