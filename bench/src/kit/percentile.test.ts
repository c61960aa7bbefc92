import { describe, expect, it } from "vitest";
import { p50p99Ms, percentile, upperPercentile } from "./percentile.ts";

const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);

describe("percentile (nearest rank)", () => {
  it("is the smallest sample with at least p % at or below it", () => {
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
    expect(percentile(hundred, 0)).toBe(1);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([2, 1], 50)).toBe(1);
  });

  it("answers the caller's value for no samples, NaN unless told", () => {
    expect(percentile([], 50)).toBeNaN();
    expect(percentile([], 50, 0)).toBe(0);
  });

  it("leaves the samples in their order", () => {
    const xs = [3, 1, 2];
    percentile(xs, 50);
    expect(xs).toEqual([3, 1, 2]);
  });
});

describe("upperPercentile", () => {
  it("is the sample at index ⌊p/100 · n⌋, one above the nearest rank when that is whole", () => {
    expect(upperPercentile(hundred, 50)).toBe(51);
    expect(upperPercentile(hundred, 99)).toBe(100);
    expect(upperPercentile(hundred, 100)).toBe(100);
    expect(upperPercentile([2, 1], 50)).toBe(2);
    expect(upperPercentile([1, 2, 3], 50)).toBe(percentile([1, 2, 3], 50));
  });

  it("answers the caller's value for no samples, NaN unless told", () => {
    expect(upperPercentile([], 99)).toBeNaN();
    expect(upperPercentile([], 99, 0)).toBe(0);
  });

  it("takes a fraction spelled as a percent to the same index as the fraction itself", () => {
    for (const n of [1, 7, 100, 1234]) {
      const xs = Array.from({ length: n }, (_, i) => i);
      expect(upperPercentile(xs, 99)).toBe(xs[Math.min(n - 1, Math.floor(n * 0.99))]);
      expect(upperPercentile(xs, 50)).toBe(xs[Math.min(n - 1, Math.floor(n * 0.5))]);
    }
  });
});

describe("p50p99Ms", () => {
  it("prints both by upperPercentile to two places", () => {
    expect(p50p99Ms(hundred)).toBe("p50 51.00 ms, p99 100.00 ms");
  });
});
