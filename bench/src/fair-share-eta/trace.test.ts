import { describe, expect, it } from "vitest";
import { arrivals, CAPACITY, DAY, MAX_RUNTIME, ORGS, pick, TRUE_LAW, trueRate } from "./trace.ts";

describe("the fair-share ETA bench's trace", () => {
  it("is the same for the same seed and another for another", () => {
    const a = arrivals(2, 0.5, 0.5);
    expect(arrivals(2, 0.5, 0.5)).toEqual(a);
    expect(arrivals(3, 0.5, 0.5).sessions).not.toEqual(a.sessions);
  });

  it("arrives in order within its days, with lengths under the time limit and 1, 2 or 4 GPUs", () => {
    const { sessions } = arrivals(2, 0.8, 1);
    expect(sessions.length).toBeGreaterThan(100);
    for (const [i, s] of sessions.entries()) {
      if (i > 0) expect(s.arrival).toBeGreaterThan((sessions[i - 1] as { arrival: number }).arrival);
      expect(s.arrival).toBeLessThan(1.01 * DAY);
      expect(s.length).toBeGreaterThan(0);
      expect(s.length).toBeLessThanOrEqual(MAX_RUNTIME);
      expect([1, 2, 4]).toContain(s.gpus);
      expect(ORGS.map((o) => o.org)).toContain(s.org);
    }
    expect(new Set(sessions.map((s) => s.key)).size).toBe(sessions.length);
  });

  it("offers about the utilisation asked for: GPU-time over capacity-time", () => {
    for (const utilisation of [0.5, 0.95]) {
      const { sessions } = arrivals(5, utilisation, 4);
      const offered = sessions.reduce((x, s) => x + s.gpus * s.length, 0) / (CAPACITY * 4 * DAY);
      expect(offered).toBeGreaterThan(utilisation * 0.8);
      expect(offered).toBeLessThan(utilisation * 1.2);
    }
  });

  it("splits the base rate among the organizations by their shares, on a daily cycle", () => {
    const { baseRate } = arrivals(2, 0.8, 0.1);
    const sum = ORGS.reduce((x, o) => x + trueRate(baseRate, o.org, 0), 0);
    expect(sum).toBeCloseTo(baseRate);
    expect(trueRate(baseRate, "physics", DAY / 4)).toBeCloseTo(1.5 * 0.5 * baseRate);
    expect(trueRate(baseRate, "nobody", 0)).toBe(0);
  });

  it("picks the entry whose cumulative share passes u, the last one past the total", () => {
    const list = [
      { name: "a", p: 0.5 },
      { name: "b", p: 0.3 },
      { name: "c", p: 0.2 },
    ];
    expect(pick(list, 0).name).toBe("a");
    expect(pick(list, 0.5).name).toBe("a");
    expect(pick(list, 0.51).name).toBe("b");
    expect(pick(list, 0.99).name).toBe("c");
    expect(pick(list, 1.5).name).toBe("c");
    expect(pick(list, -0.2).name).toBe("a");
  });

  it("hands the oracle rows 999 lengths of its own law", () => {
    expect(TRUE_LAW).toHaveLength(999);
    expect(TRUE_LAW.every((l) => l.lengthMs > 0 && l.lengthMs <= MAX_RUNTIME)).toBe(true);
  });
});
