// Idle auto-pause and time limits as the console words them (docs/dev/idle-and-limits.md): why a session
// was paused, in plain words, and how long is left before a warned pause.

const REASONS: Record<string, string> = {
  PausedByUser: "Paused by you or an administrator.",
  InsufficientCredits: "Paused because its credits ran out. Ask for credits, then resume it.",
  MemberRemoved: "Paused because its owner left the organization.",
  Idle: "Paused because nobody used it for its idle timeout: no GPU work, no typing, no busy kernel. Its files are kept; resume it to carry on.",
  MaxRuntime:
    "Paused because it reached its maximum running time. Its files are kept; resume it to start a new period.",
  CapacityReclaimed:
    "Paused to give its borrowed GPU back to a guaranteed session. Its files are kept; it resumes ahead of new work when room returns.",
};

/** Why a paused session is paused, in words; undefined for a reason the console does not know. */
export function pauseReasonText(reason: string | null | undefined): string | undefined {
  return reason ? REASONS[reason] : undefined;
}

/** "in 12 min", "in 40 s", "now" until a deadline. */
export function countdown(deadline: string, nowMs: number): string {
  const left = Date.parse(deadline) - nowMs;
  if (!Number.isFinite(left) || left <= 0) return "now";
  if (left < 60_000) return `in ${Math.ceil(left / 1000)} s`;
  const min = Math.ceil(left / 60_000);
  return min < 120 ? `in ${min} min` : `in ${Math.floor(min / 60)} h ${min % 60} min`;
}

/** "45 min", "2 h", "1 h 30 min". */
export function minutesText(min: number): string {
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
}

export interface IdleRules {
  timeout_minutes: number;
  min_timeout_minutes: number;
  max_timeout_minutes: number;
  max_runtime_minutes: number;
}

/**
 * What is wrong with the wizard's idle timeout and maximum running time (in minutes; undefined: the
 * policy's), in words, by field; empty when the API would accept them. The API checks the same
 * (api/src/domain/catalog/reclaimPolicy.ts).
 */
export function reclaimAskProblems(
  rules: IdleRules,
  idle: number | undefined,
  runtime: number | undefined,
): { idle?: string; runtime?: string } {
  const out: { idle?: string; runtime?: string } = {};
  if (idle !== undefined && rules.timeout_minutes > 0) {
    if (!Number.isInteger(idle)) out.idle = "Give the idle timeout in whole minutes.";
    else if (idle < rules.min_timeout_minutes || idle > rules.max_timeout_minutes)
      out.idle = `Your resource policy allows an idle timeout between ${minutesText(rules.min_timeout_minutes)} and ${minutesText(rules.max_timeout_minutes)}.`;
  }
  if (runtime !== undefined) {
    if (!Number.isInteger(runtime) || runtime < 1) out.runtime = "Give the maximum running time in whole minutes.";
    else if (runtime > rules.max_runtime_minutes)
      out.runtime = `Your resource policy allows at most ${minutesText(rules.max_runtime_minutes)} of running time.`;
  }
  return out;
}

/** The API's refusal of an out-of-bounds ask (`details: {field, value, min, max}`), in words. */
export function outOfBoundsText(details: Record<string, unknown>): string | undefined {
  const { field, value, min, max } = details;
  if (typeof value !== "number" || typeof min !== "number" || typeof max !== "number") return undefined;
  if (field === "idle_timeout_minutes")
    return `An idle timeout of ${minutesText(value)} is outside your resource policy's bounds: choose between ${minutesText(min)} and ${minutesText(max)}.`;
  if (field === "max_runtime_minutes")
    return `A maximum running time of ${minutesText(value)} is over your resource policy's ceiling: choose at most ${minutesText(max)}.`;
  return undefined;
}

const SIGNALS: Record<string, string> = {
  gpu: "no GPU utilisation readings reach Berth from its cluster",
  traffic: "its cluster's session gateway has not reported",
  notebook: "its notebook server does not answer",
};

/** Why the idle rule is suspended, from the signals it misses, in one sentence; undefined when none is. */
export function suspendedText(missing: readonly string[]): string | undefined {
  if (missing.length === 0) return undefined;
  const parts = missing.map((m) => SIGNALS[m] ?? `the ${m} signal is unknown`);
  const list = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
  return `Idle pausing is suspended for this session: ${list}. Berth pauses a session for idleness only when it can tell nobody uses it, so this one will not be paused for idleness until that comes back; its time limit still applies.`;
}
