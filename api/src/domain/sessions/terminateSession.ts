// Terminate: everything on the GPU cluster goes; the resource is deleted after a retention period and
// the history row stays for ever (the ledger names it).

import type { SessionView } from "../../db/operations/sessions/view.ts";
import type { Deps } from "../../deps.ts";
import type { Principal } from "../identity/principal.ts";
import { act } from "./act.ts";

export function terminateSession(deps: Deps, principal: Principal, id: string): Promise<SessionView> {
  return act(deps, principal, id, { action: "terminate" }, () => ({ spec: { desiredState: "Terminated" } }));
}
