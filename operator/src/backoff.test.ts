import { describe, expect, it } from "vitest";
import { backoffDelay } from "./backoff.ts";

describe("backoffDelay", () => {
  const policy = { baseMs: 500, maxMs: 30_000, jitter: 0.5 };
  const cases: [failures: number, random: number, expected: number][] = [
    [1, 0, 500],
    [2, 0, 1000],
    [3, 0, 2000],
    [7, 0, 30_000], // 500·2^6 = 32 000, capped
    [1000, 0, 30_000], // no overflow
    [1, 0.999_999, 250], // at most half of it is random
    [7, 0.5, 22_500],
    [0, 0, 500], // nonsense input behaves as the first failure
  ];
  for (const [failures, random, expected] of cases) {
    it(`after ${failures} failure(s) with random ${random} waits ${expected} ms`, () => {
      expect(backoffDelay(failures, policy, () => random)).toBe(expected);
    });
  }
  it("without jitter the delay is exact", () => {
    expect(backoffDelay(3, { ...policy, jitter: 0 }, () => 0.9)).toBe(2000);
  });
});
