import { describe, expect, it } from "vitest";
import { lowerMedian, median } from "./median.ts";

describe("the medians", () => {
  it("agree on an odd count", () => {
    for (const f of [median, lowerMedian]) expect(f([5, 1, 3])).toBe(3);
  });

  it("differ on an even count: the mean or the lower middle sample", () => {
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(lowerMedian([4, 1, 2, 3])).toBe(2);
  });

  it("answer 0 for no samples", () => {
    expect(median([])).toBe(0);
    expect(lowerMedian([])).toBe(0);
  });
});
