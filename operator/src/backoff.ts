// Capped exponential backoff with jitter, shared by every retry loop of the operator (control-plane
// reports, relists, lease calls). Jitter spreads many operators that fail together (a control plane
// restart) so they do not come back in lock-step.

export interface BackoffPolicy {
  /** Delay before the first retry, before jitter. */
  baseMs: number;
  /** Ceiling of the un-jittered delay. */
  maxMs: number;
  /** Fraction of the delay that is random, 0..1: the delay lies in [d·(1-jitter), d]. */
  jitter: number;
}

export const defaultBackoff: BackoffPolicy = { baseMs: 500, maxMs: 30_000, jitter: 0.5 };

/**
 * Delay before retry number `failures` (1 = after the first failure). `random` is injectable for tests
 * and must return a value in [0, 1).
 */
export function backoffDelay(failures: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const n = Math.max(1, Math.floor(failures));
  // 2^(n-1) overflows to Infinity long before it matters; min() keeps the cap.
  const raw = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(n - 1, 52));
  const jitter = Math.min(1, Math.max(0, policy.jitter));
  return Math.round(raw * (1 - jitter * random()));
}
