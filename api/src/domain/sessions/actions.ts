// The action-phase matrix: which action makes sense in which phase. Anything else is refused with 409
// `invalid_session_state` (details: phase, desired state, the actions allowed now) — never a 500, never
// a silent no-op. A request already made (pause twice) is refused too: the first one is still under way.
import { DomainError } from "../../errors.ts";

export const SESSION_ACTIONS = ["pause", "resume", "restart", "terminate"] as const;
export type SessionAction = (typeof SESSION_ACTIONS)[number];

const MATRIX: Record<string, readonly SessionAction[]> = {
  Pending: ["pause", "terminate"],
  Queued: ["pause", "terminate"],
  Starting: ["pause", "terminate"],
  Resuming: ["pause", "terminate"],
  Running: ["pause", "restart", "terminate"],
  Restarting: ["pause", "terminate"],
  Pausing: ["terminate"],
  Paused: ["resume", "terminate"],
  Unknown: ["pause", "terminate"],
  Failed: ["terminate"],
  Terminating: [],
  Terminated: [],
};

/** Actions allowed now, given the phase and what was asked last (desired state). */
export function allowedActions(phase: string, desired: string): SessionAction[] {
  const base = MATRIX[phase] ?? [];
  return base.filter((a) => {
    if (desired === "Terminated") return false; // termination is under way
    if (desired === "Paused") return a === "terminate" || (a === "resume" && phase === "Paused");
    return true;
  });
}

export class InvalidSessionState extends DomainError {
  constructor(action: SessionAction, phase: string, desired: string) {
    const allowed = allowedActions(phase, desired);
    const why =
      desired === "Terminated"
        ? "the session is being terminated"
        : desired === "Paused" && phase !== "Paused"
          ? "the session is being paused"
          : `a ${phase} session cannot be ${action === "pause" ? "paused" : action === "resume" ? "resumed" : action === "restart" ? "restarted" : "terminated"}`;
    super("invalid_session_state", `cannot ${action}: ${why}`, {
      action,
      phase,
      desired_state: desired,
      allowed_actions: allowed,
    });
  }
}

export function assertAllowed(action: SessionAction, phase: string, desired: string): void {
  if (!allowedActions(phase, desired).includes(action)) throw new InvalidSessionState(action, phase, desired);
}
