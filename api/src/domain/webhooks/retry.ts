// When to try a failed delivery again: the schedule (immediately, 5 s, 5 min, 30 min, 2 h, 5 h,
// 10 h, 14 h) with ±20 % jitter so that a recovering receiver is not hit by every endpoint at once. The
// first entry is the first attempt; after the last the delivery is failed (manual redelivery remains).
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  14 * 3_600_000,
];

/**
 * Delay before attempt number `attempts + 1` (`attempts` made so far), or null when the schedule is spent.
 * A Retry-After from the receiver is honoured when it asks for longer (capped at the schedule's last step).
 */
export function nextDelayMs(
  schedule: readonly number[],
  attempts: number,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number | null {
  const base = schedule[attempts];
  if (base === undefined) return null;
  const jittered = Math.round(base * (0.8 + 0.4 * random()));
  const last = schedule[schedule.length - 1] ?? 0;
  if (retryAfterMs !== null && retryAfterMs > jittered) return Math.min(retryAfterMs, Math.max(last, jittered));
  return jittered;
}

/** Retry-After as seconds or an HTTP date; null when absent or unparsable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}
