// Session events: what the SSE stream (GET /api/v1/sessions/events) sends. Written to `session_events`
// by the API (created) and the worker (every change of phase, queue position or intent); each API
// replica relays rows to the connections allowed to see them (routes/sessions/stream.ts).
//
// Event names (the SSE `event:` field):
//   session.created   a session was accepted (phase Pending)
//   session.updated   its phase, conditions, cluster, node or queue position changed, or an action was
//                     accepted (desired state, priority); `previous_phase` says where it came from
//   session.deleted   its resource was deleted after retention (the history row stays)
// Payload (the SSE `data:` field, JSON): {id, type, at, session_id, previous_phase?, session: <the same
// object GET /api/v1/sessions/{id} answers>}. `id` is also the SSE `id:`: resume with Last-Event-ID.
import type { NewSessionEvent } from "../../db/operations/sessions/sessionEvents.ts";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import type { SessionView } from "../../db/operations/sessions/view.ts";

export const SESSION_EVENT_TYPES = ["session.created", "session.updated", "session.deleted"] as const;
export type SessionEventType = (typeof SESSION_EVENT_TYPES)[number];

type Ownership = Pick<SessionRow, "id" | "owner_id" | "organization_id" | "project_id">;

export function sessionEventOf(
  type: SessionEventType,
  row: Ownership,
  view: SessionView,
  previousPhase?: string,
): NewSessionEvent {
  return {
    session_id: row.id,
    owner_id: row.owner_id,
    organization_id: row.organization_id,
    project_id: row.project_id,
    type,
    payload: {
      view: JSON.parse(JSON.stringify(view)) as Record<string, unknown>,
      ...(previousPhase !== undefined ? { previous_phase: previousPhase } : {}),
    },
  };
}

const DATE_FIELDS = [
  "createdAt",
  "updatedAt",
  "queuedAt",
  "scheduledAt",
  "startedAt",
  "pausedAt",
  "terminatedAt",
] as const;

/** The stored view back, with its dates. */
export function viewOfPayload(payload: Record<string, unknown>): SessionView {
  const v = { ...(payload.view as Record<string, unknown>) };
  for (const f of DATE_FIELDS) v[f] = v[f] ? new Date(v[f] as string) : null;
  return v as unknown as SessionView;
}
