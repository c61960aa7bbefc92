// Restart: the pod is replaced on the same cluster (same name, after the old one is gone). The request is
// a counter in an annotation, so two restarts asked for are two restarts done, and none is lost.

import { ANNOTATIONS } from "@berth/crds";
import type { SessionView } from "../../db/operations/sessions/view.ts";
import type { Deps } from "../../deps.ts";
import type { Principal } from "../identity/principal.ts";
import { act } from "./act.ts";

export function restartSession(deps: Deps, principal: Principal, id: string): Promise<SessionView> {
  return act(deps, principal, id, { action: "restart" }, (cr) => ({
    annotations: { [ANNOTATIONS.restarts]: String(Number(cr.metadata.annotations?.[ANNOTATIONS.restarts] ?? "0") + 1) },
  }));
}
