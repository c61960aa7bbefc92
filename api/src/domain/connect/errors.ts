// Why a connect attempt is refused. Each reason is a stable string in `error.details.reason`, so the
// gateway can show a page that says what happened (and the console can say what to do).
import { Conflict, DomainError, NotFound } from "../../errors.ts";

export const CONNECT_REFUSAL_REASONS = [
  "token_invalid", // not shaped like a connect token
  "token_unknown", // no such token (never issued, or purged long after expiry)
  "token_used", // already redeemed once
  "token_expired",
  "other_session", // issued for another session than the one in the path
  "other_cluster", // issued for a session on another cluster (presented to the wrong gateway)
  "session_moved", // the session now runs elsewhere than the token was issued for
  "not_allowed", // the user may no longer use the session
] as const;
export type ConnectRefusalReason = (typeof CONNECT_REFUSAL_REASONS)[number];

/** 403 forbidden with details.reason. */
export class ConnectRefused extends DomainError {
  readonly reason: ConnectRefusalReason;
  constructor(reason: ConnectRefusalReason, message: string) {
    super("forbidden", message, { reason });
    this.reason = reason;
  }
}

/** 409 conflict, details {reason: "session_not_running", phase}: paused, starting, ended… */
export class SessionNotRunning extends Conflict {
  readonly phase: string;
  constructor(sessionId: string, phase: string) {
    super(`session ${sessionId} is ${phase}, not Running: connect when it runs again`, {
      reason: "session_not_running",
      phase,
      session_id: sessionId,
    });
    this.phase = phase;
  }
}

/** 404 not_found, details.reason "session_gone": the session no longer exists. */
export class SessionGone extends NotFound {
  constructor(sessionId: string) {
    super("session", sessionId, { reason: "session_gone" });
  }
}
