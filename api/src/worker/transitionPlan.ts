// What a session's transition writes besides its resource, decided from the resource alone: the history
// row's fields (transitionOf) and the owner's notification for a change they did not make (bellFor).
// Pure; TransitionLog (transitionLog.ts) writes them.
import { HOLDING_PHASES } from "@berth/controllers";
import { type InterimStatus, PAUSE_REASON_ANNOTATION, type Session, SessionReason, sessionIdOf } from "@berth/crds";
import type { SessionTransition } from "../db/operations/sessions/recordTransitions.ts";
import type { SessionRow } from "../db/operations/sessions/types.ts";
import { leadingCondition } from "../db/operations/sessions/view.ts";
import type { NewNotification } from "../domain/notifications/notify.ts";

const ts = (s: string | undefined) => (s ? new Date(s) : null);

/** What the history row takes of a session's status (kept off the resource when `interim` is given). */
export function transitionOf(after: Session, interim?: InterimStatus): SessionTransition {
  const st = after.status ?? {};
  const lead = leadingCondition(st.conditions);
  return {
    id: sessionIdOf(after.metadata.name as string),
    phase: st.phase ?? "Pending",
    desired_state: after.spec.desiredState,
    priority: after.spec.priority,
    node: st.node ?? null,
    queue_position: st.queue?.position ?? null,
    reason: lead?.reason ?? null,
    message: (st.queue?.reason ?? lead?.message ?? null)?.slice(0, 4000) ?? null,
    queued_at: ts(st.queuedAt),
    scheduled_at: ts(st.scheduledAt),
    started_at: ts(st.startedAt),
    paused_at: ts(st.pausedAt),
    terminated_at: ts(st.terminatedAt),
    gpu_model: st.gpuModel ?? null,
    cluster_id: st.cluster ?? null,
    // Cards only while it holds them (a paused session keeps its last placement in status, not its cards).
    gpu_cards: st.gpuAssignment && HOLDING_PHASES.includes(st.phase ?? "Pending") ? st.gpuAssignment.cards : null,
    interim_status: interim ?? null,
  };
}

/** Pause reasons the owner did not choose, as notifications name them. */
const PAUSED_BECAUSE: Record<string, string> = {
  [SessionReason.InsufficientCredits]: "credits",
  [SessionReason.MemberRemoved]: "member_removed",
};

/**
 * The owner's notification for a phase change they did not make: failed, or paused by the system. A
 * user's own pause tells them nothing; an administrator's is notified by the pause itself
 * (domain/sessions/pauseSession.ts). Keyed per session, so billing's own "paused for credits" and this
 * one are a single notification.
 */
export function bellFor(before: Session, after: Session, row: SessionRow): NewNotification[] {
  const phase = after.status?.phase;
  if (phase === before.status?.phase) return [];
  const name = row.display_name ?? row.id;
  const base = { userId: row.owner_id, organizationId: row.organization_id, at: new Date() };
  if (phase === "Failed") {
    const why = leadingCondition(after.status?.conditions)?.message ?? "";
    return [
      {
        ...base,
        kind: "session.failed",
        title: "Session failed",
        body: `Your session ${name} failed.${why ? ` ${why.slice(0, 500)}` : ""}`,
        data: { session_id: row.id, reason: leadingCondition(after.status?.conditions)?.reason ?? null },
        dedupeKey: `session.failed:${row.id}`,
      },
    ];
  }
  const reason = PAUSED_BECAUSE[after.metadata.annotations?.[PAUSE_REASON_ANNOTATION] ?? ""];
  if (phase === "Paused" && reason)
    return [
      {
        ...base,
        kind: "session.paused",
        title: "Session paused",
        body:
          reason === "credits"
            ? `Your session ${name} was paused because its credits ran out. Its volumes are kept.`
            : `Your session ${name} was paused because you were removed from its organization.`,
        data: { session_id: row.id, reason },
        dedupeKey: `session.paused:${row.id}`,
      },
    ];
  return [];
}
