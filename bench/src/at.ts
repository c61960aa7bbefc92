/** The k-th element, which the caller knows is there (rounds of equal length, a non-empty list). */
export function at<T>(xs: readonly T[], k: number): T {
  const x = xs[k];
  if (x === undefined) throw new Error(`no element ${k} of ${xs.length}`);
  return x;
}
