// Medians the benches print; two are in use, each kept by the benches that published figures with it (the
// upper middle sample is upperPercentile(xs, 50), percentile.ts).

const sorted = (xs: readonly number[]) => [...xs].sort((a, b) => a - b);

/** The middle sample, or the mean of the two middle ones for an even count; 0 for no samples. */
export function median(xs: readonly number[]): number {
  const s = sorted(xs);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
}

/** The lower of the two middle samples for an even count; 0 for no samples. */
export function lowerMedian(xs: readonly number[]): number {
  const s = sorted(xs);
  return s.length === 0 ? 0 : (s[Math.floor((s.length - 1) / 2)] as number);
}
