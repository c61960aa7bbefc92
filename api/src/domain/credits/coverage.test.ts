import { describe, expect, it } from "vitest";
import { Coverage } from "./coverage.ts";

describe("Coverage", () => {
  it("charges only what no earlier sample of the session covered", () => {
    const c = new Coverage();
    expect(c.uncovered("a", 0, 60)).toBe(60);
    c.add("a", 0, 60);
    expect(c.uncovered("a", 0, 60)).toBe(0); // the same minute under another id
    expect(c.uncovered("a", 30, 90)).toBe(30); // another interval length over the same time
    expect(c.uncovered("b", 0, 60)).toBe(60); // another session's time is its own
    c.add("a", 120, 180);
    expect(c.uncovered("a", 0, 240)).toBe(240 - 60 - 60);
  });

  it("agrees with counting moment by moment, for any order of samples", () => {
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const c = new Coverage();
      const covered = new Set<number>();
      for (let i = 0; i < 12; i++) {
        const start = next(100);
        const end = start + next(30);
        const brute = Array.from({ length: end - start }, (_, k) => start + k).filter((t) => !covered.has(t)).length;
        expect(c.uncovered("s", start, end)).toBe(brute);
        c.add("s", start, end);
        for (let t = start; t < end; t++) covered.add(t);
      }
    }
  });
});
