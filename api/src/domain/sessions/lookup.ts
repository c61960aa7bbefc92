// Finding a session for a caller: the row (404 when absent or not visible), then the live resource.
import { type Session, SessionKind, withInterim } from "@berth/crds";
import { findSessionById } from "../../db/operations/sessions/findSessionById.ts";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import type { Deps } from "../../deps.ts";
import { NotFound, Unavailable } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { sessionPath, sessionsRuntimeOf } from "./runtime.ts";
import { canSeeSession } from "./visibility.ts";

export async function visibleRow(deps: Deps, principal: Principal, id: string): Promise<SessionRow> {
  const row = await findSessionById(deps.db, id);
  if (!row || !canSeeSession(principal, row)) throw new NotFound("session", id);
  return row;
}

/**
 * The Session resource as the session stands (with the status the worker keeps off it in an interim
 * phase, from the row; `asStored`: as the management cluster stores it), or undefined once retention
 * deleted it.
 */
export async function readResource(
  deps: Pick<Deps, "sessions">,
  row: SessionRow,
  opts: { asStored?: boolean } = {},
): Promise<Session | undefined> {
  if (row.resource_deleted_at) return undefined;
  const { kube } = sessionsRuntimeOf(deps);
  const res = await kube.request("GET", sessionPath(row.namespace, row.cr_name)).catch((e: unknown) => {
    throw new Unavailable("the management cluster did not answer", { reason: (e as Error).message });
  });
  if (res.status === 404) return undefined;
  if (res.status >= 300) throw new Unavailable(`reading the session's resource failed (${res.status})`);
  const cr = SessionKind.schema.parse(res.body);
  return opts.asStored ? cr : withInterim(cr, row.interim_status);
}
