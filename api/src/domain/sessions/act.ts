// The common path of every action on a session: find it (404 when not visible), read its resource,
// check the action-phase matrix, write the new intent to the resource with its resourceVersion (a
// concurrent change is re-read and re-checked, never overwritten), mirror the intent in the history row
// and tell the stream. The worker does the rest.
import { type Session, SessionKind, withInterim } from "@berth/crds";
import type { Knex } from "knex";
import { lockOwner } from "../../db/operations/sessions/countLiveForOwner.ts";
import { insertSessionEvents } from "../../db/operations/sessions/sessionEvents.ts";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import { updateSession } from "../../db/operations/sessions/updateSession.ts";
import { type SessionView, viewFromResource } from "../../db/operations/sessions/view.ts";
import type { Deps } from "../../deps.ts";
import { Unavailable } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { assertAllowed, InvalidSessionState, type SessionAction } from "./actions.ts";
import { sessionEventOf } from "./events.ts";
import { readResource, visibleRow } from "./lookup.ts";
import { sessionPath, sessionsRuntimeOf } from "./runtime.ts";

export interface ActOptions {
  /** Extra checks with the current resource (e.g. who may raise priority); throw to refuse. */
  check?: (cr: Session, row: SessionRow) => Promise<void> | void;
  /** Runs in a transaction holding the owner's lock before the write (quota on resume). */
  inLock?: (tx: Knex.Transaction, cr: Session, row: SessionRow) => Promise<void>;
  /** Skip the matrix (priority changes have their own rule). */
  action?: SessionAction;
  /**
   * Tell the stream here. Not for pause, resume, restart, terminate: the worker's phase change follows
   * within milliseconds and carries the new desired state, while an event from here could land after it
   * with a phase the worker has already left.
   */
  emitEvent?: boolean;
}

export async function act(
  deps: Deps,
  principal: Principal,
  id: string,
  opts: ActOptions,
  patchOf: (cr: Session) => { spec?: Partial<Session["spec"]>; annotations?: Record<string, string> },
): Promise<SessionView> {
  const row = await visibleRow(deps, principal, id);
  const { kube } = sessionsRuntimeOf(deps);
  for (let attempt = 0; ; attempt++) {
    const cr = await readResource(deps, row);
    if (!cr) {
      if (opts.action)
        throw new InvalidSessionState(
          opts.action,
          row.phase === "Terminated" ? "Terminated" : row.phase,
          row.desired_state,
        );
      throw new Unavailable("the session's resource is gone");
    }
    const phase = cr.status?.phase ?? "Pending";
    if (opts.action) assertAllowed(opts.action, phase, cr.spec.desiredState);
    await opts.check?.(cr, row);
    // The intent lands in the row inside the owner's lock, so a concurrent create counts this session;
    // if the resource then is not changed, the row gets the resource's intent back (else a resume that
    // never happened would hold the owner's limits for ever). A write that did land despite an error
    // comes back through the worker, which copies the resource's intent with its next phase.
    const intent = opts.inLock ? patchOf(cr).spec?.desiredState : undefined;
    if (opts.inLock) {
      const inLock = opts.inLock;
      await deps.db.transaction(async (tx) => {
        await lockOwner(tx, row.owner_id);
        await inLock(tx, cr, row);
        if (intent) await tx("sessions").where({ id: row.id }).update({ desired_state: intent });
      });
    }
    const undoIntent = async () => {
      if (!intent || intent === cr.spec.desiredState) return;
      await deps
        .db("sessions")
        .where({ id: row.id, desired_state: intent })
        .update({ desired_state: cr.spec.desiredState })
        .catch((e: unknown) => deps.log.warn({ err: e, session: row.id }, "could not take back the session's intent"));
    };
    const p = patchOf(cr);
    const body = {
      metadata: {
        resourceVersion: cr.metadata.resourceVersion,
        ...(p.annotations ? { annotations: p.annotations } : {}),
      },
      ...(p.spec ? { spec: p.spec } : {}),
    };
    const res = await kube
      .request("PATCH", sessionPath(row.namespace, row.cr_name), { body })
      .catch(async (e: unknown) => {
        await undoIntent();
        throw new Unavailable("the management cluster did not answer", { reason: (e as Error).message });
      });
    if (res.status >= 300) await undoIntent();
    if (res.status === 409 && attempt < 3) continue; // changed under us: re-read, re-check
    if (res.status === 404) throw new InvalidSessionState(opts.action ?? "terminate", "Terminated", "Terminated");
    if (res.status >= 300) throw new Unavailable(`updating the session's resource failed (${res.status})`);
    const updated = SessionKind.schema.parse(res.body);
    const now = deps.clock.now();
    const changed = await updateSession(
      deps.db,
      row.id,
      { desired_state: updated.spec.desiredState, priority: updated.spec.priority },
      now,
    );
    // As the session stands: an interim status the worker keeps in the row still applies.
    const view = viewFromResource(changed ?? row, withInterim(updated, (changed ?? row).interim_status));
    if (opts.emitEvent) await insertSessionEvents(deps.db, [sessionEventOf("session.updated", row, view, phase)]);
    return view;
  }
}
