// The percentiles the benches print. Two definitions are in use and they differ (for 2 samples the p50 of
// one is the lower, of the other the upper): each bench keeps the one its published figures were taken with.

const sorted = (xs: readonly number[]) => [...xs].sort((a, b) => a - b);

/**
 * The p-th percentile (p in 0..100) by nearest rank: the smallest sample with at least p % of the samples
 * at or below it. `empty` for no samples.
 */
export function percentile(xs: readonly number[], p: number, empty = Number.NaN): number {
  if (xs.length === 0) return empty;
  const s = sorted(xs);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] as number;
}

/**
 * The sample at index ⌊p/100 · n⌋ of the sorted samples (capped at the last): the smallest with more than
 * p % at or below it, one above the nearest rank when p/100 · n is whole. `empty` for no samples.
 */
export function upperPercentile(xs: readonly number[], p: number, empty = Number.NaN): number {
  if (xs.length === 0) return empty;
  const s = sorted(xs);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
}

/** "p50 1.23 ms, p99 4.56 ms" by upperPercentile. */
export const p50p99Ms = (xs: readonly number[]) =>
  `p50 ${upperPercentile(xs, 50).toFixed(2)} ms, p99 ${upperPercentile(xs, 99).toFixed(2)} ms`;
