// Idle auto-pause and time limits as the console words them (docs/dev/idle-and-limits.md): why a session
// was paused, in plain words, and how long is left before a warned pause.

const REASONS: Record<string, string> = {
  PausedByUser: "Paused by you or an administrator.",
  InsufficientCredits: "Paused because its credits ran out. Ask for credits, then resume it.",
  MemberRemoved: "Paused because its owner left the organization.",
  Idle: "Paused because nobody used it for its idle timeout: no GPU work, no typing, no busy kernel. Its files are kept; resume it to carry on.",
  MaxRuntime:
    "Paused because it reached its maximum running time. Its files are kept; resume it to start a new period.",
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
