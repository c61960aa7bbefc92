import { describe, expect, it } from "vitest";
import { fairnessRow, type WeekResult } from "./shares.ts";

const aWeek = (over: Partial<WeekResult> = {}): WeekResult => ({
  gpuHours: { physics: 500, biology: 250, nlp: 250 },
  reclaims: 14,
  activeReclaimed: 3,
  activeWhileIdleAvailable: 1,
  guaranteedWaitsMin: [1, 2, 3, 4, 50],
  passCpuMs: 2016,
  gaveUp: 0,
  ...over,
});

describe("a week's row of the fairness table", () => {
  it("puts each organization's share of the GPU-hours beside its fair share", () => {
    const row = fairnessRow(aWeek(), 7);
    expect(row["physics (fair 50 %)"]).toBe("50.0 %");
    expect(row["biology (fair 25 %)"]).toBe("25.0 %");
    expect(row["max |dev|"]).toBe("0.0 pts");
    expect(fairnessRow(aWeek({ gpuHours: { physics: 600, biology: 200, nlp: 200 } }), 7)["max |dev|"]).toBe("10.0 pts");
  });

  it("spreads counts over the days and the pass's CPU over the minutes", () => {
    const row = fairnessRow(aWeek(), 7);
    expect(row["GPU util"]).toBe(`${((1000 / (64 * 7 * 24)) * 100).toFixed(0)} %`);
    expect(row["reclaims/day"]).toBe("2.0");
    expect(row["pass CPU ms/min"]).toBe("0.20");
    expect(row["guaranteed wait p50/p90 min"]).toBe("3/50");
  });

  it("shows waits of 0 when nothing guaranteed waited", () => {
    expect(fairnessRow(aWeek({ guaranteedWaitsMin: [] }), 7)["guaranteed wait p50/p90 min"]).toBe("0/0");
  });
});
