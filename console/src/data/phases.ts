// Session phases as the console shows them (docs/dev/sessions.md, Phases), and the actions with the
// confirmation each needs. The API's allowed_actions decides what is possible; this only words it.
import type { SessionPhase } from "../api/openapi.gen.ts";

export type Tone = "ok" | "warn" | "bad" | "muted" | "info";

/** The contract's phases (generated from the API's OpenAPI document). */
export type Phase = SessionPhase;

const TONE: Record<Phase, Tone> = {
  Pending: "info",
  Queued: "warn",
  Starting: "info",
  Running: "ok",
  Pausing: "info",
  Paused: "muted",
  Resuming: "info",
  Restarting: "info",
  Terminating: "info",
  Terminated: "muted",
  Failed: "bad",
  Unknown: "bad",
};

const HELP: Record<Phase, string> = {
  Pending: "Accepted; a cluster is being chosen.",
  Queued: "Waiting for a free GPU of its model.",
  Starting: "Placed on a cluster; the pod is starting.",
  Running: "Running; connect links work.",
  Pausing: "The pod is being removed; the GPU returns to the pool.",
  Paused: "No pod and no GPU; volumes are kept and billing stopped.",
  Resuming: "Getting a GPU again.",
  Restarting: "The pod is being replaced.",
  Terminating: "Everything on the cluster is being removed.",
  Terminated: "Ended; its history is kept.",
  Failed: "The session could not run; its GPU was released.",
  Unknown: "Its cluster stopped reporting.",
};

/**
 * Every phase, in the order the console lists them: the keys of TONE, which the compiler holds to the
 * contract's SessionPhase (a phase added there fails to compile here until it has a tone and help).
 */
export const PHASES = Object.keys(TONE) as Phase[];

export function phaseTone(phase: string): Tone {
  return TONE[phase as Phase] ?? "muted";
}

export function phaseHelp(phase: string): string {
  return HELP[phase as Phase] ?? "";
}

/** Phases on the way somewhere: the page shows them as in progress. */
export function isTransitional(phase: string): boolean {
  return ["Pending", "Starting", "Pausing", "Resuming", "Restarting", "Terminating"].includes(phase);
}

/** Phases that hold (or are about to hold) a GPU. */
export function holdsGpu(phase: string): boolean {
  return ["Starting", "Running", "Restarting", "Resuming"].includes(phase);
}

export type SessionAction = "pause" | "resume" | "restart" | "terminate";

export const ACTION_LABEL: Record<SessionAction, string> = {
  pause: "Pause",
  resume: "Resume",
  restart: "Restart",
  terminate: "Terminate",
};

export interface ActionConfirm {
  heading: string;
  body: string;
  confirmLabel: string;
  danger: boolean;
}

/** The confirmation an action needs: those that destroy something (the running pod's state, the session) ask first. */
export function actionConfirm(action: SessionAction, name: string): ActionConfirm | undefined {
  switch (action) {
    // Pausing deletes the pod as terminating does: what is only in memory (a kernel's variables) is lost.
    case "pause":
      return {
        heading: `Pause ${name}?`,
        body: "The pod stops: running processes and unsaved work in memory are lost. Files on volumes are kept. Billing stops and the GPU is returned; resume to start it again.",
        confirmLabel: "Pause",
        danger: false,
      };
    case "restart":
      return {
        heading: `Restart ${name}?`,
        body: "The pod is replaced: running processes and unsaved work in memory are lost. Files on volumes are kept.",
        confirmLabel: "Restart",
        danger: true,
      };
    case "terminate":
      return {
        heading: `Terminate ${name}?`,
        body: "The session ends for good: its pod is deleted and its GPU returned. Files on volumes are kept; the session cannot be resumed.",
        confirmLabel: "Terminate",
        danger: true,
      };
    default:
      return undefined;
  }
}
