import { describe, expect, it } from "vitest";
import { DAY, HOUR, workload } from "./workload.ts";

describe("the fair-share fairness bench's workload", () => {
  it("is the same for the same seed", () => {
    expect(workload(5, 1)).toEqual(workload(5, 1));
    expect(workload(6, 1)).not.toEqual(workload(5, 1));
  });

  it("arrives in order within its days, sessions of 1, 2 or 4 GPUs under the 8-hour cap", () => {
    const sessions = workload(5, 2);
    for (const [i, s] of sessions.entries()) {
      if (i > 0) expect(s.arrival).toBeGreaterThanOrEqual((sessions[i - 1] as { arrival: number }).arrival);
      expect(s.arrival).toBeLessThanOrEqual(2 * DAY);
      expect(s.since).toBe(s.arrival);
      expect([1, 2, 4]).toContain(s.gpus);
      expect(s.left).toBeGreaterThan(0);
      expect(s.left).toBeLessThanOrEqual(8 * HOUR);
      expect(s.idleShare).toBeLessThan(0.6);
    }
  });

  it("has physics offer more work than biology and nlp, and all of them more than the fleet", () => {
    const sessions = workload(5, 7);
    const offered = (org: string) =>
      sessions.filter((s) => s.org === org).reduce((x, s) => x + s.gpus * s.left, 0) / (64 * 7 * DAY);
    expect(offered("physics")).toBeGreaterThan(offered("biology"));
    expect(offered("physics")).toBeGreaterThan(offered("nlp"));
    expect(offered("physics") + offered("biology") + offered("nlp")).toBeGreaterThan(1.4);
  });
});
