import { describe, expect, it } from "vitest";
import { type Prediction, pctf, score, type TraceResult, tableRow } from "./score.ts";
import { MIN, type Session } from "./trace.ts";

const band = { p10: 0, p50: 0, p90: 0 };
const aPrediction = (key: string, at: number, guess: number): Prediction => ({
  key,
  at,
  position: 1,
  berth: { ...band, p50: guess, method: "simulation" },
  empirical: band,
  oracle: band,
  rank: 1,
  ahead: [],
  behind: [],
  gshare: guess,
  depth: guess,
  slurm: guess,
});
const aSession = (key: string, start?: number): Session => ({
  key,
  org: "physics",
  gpus: 1,
  arrival: 0,
  length: 60 * MIN,
  ...(start === undefined ? {} : { start }),
});

/** Three waits of 2, 10 and 20 min predicted as 2, 12 and 10 min; a fourth never started. */
const result: TraceResult = {
  sessions: [aSession("a", 2 * MIN), aSession("b", 10 * MIN), aSession("c", 20 * MIN), aSession("d")],
  predictions: [
    aPrediction("a", 0, 2 * MIN),
    aPrediction("b", 0, 12 * MIN),
    aPrediction("c", 0, 10 * MIN),
    aPrediction("d", 0, 5 * MIN),
  ],
  instant: 0,
  measured: 4,
  estimateMs: [],
  overtakes: 0,
};

describe("the fair-share ETA bench's scoring", () => {
  it("scores the predictions of sessions that started against their actual waits", () => {
    const s = score(result, (p) => p.berth.p50);
    expect(s.n).toBe(3);
    expect(s.medianAbsMin).toBe(2);
    expect(s.biasMin).toBeCloseTo(-8 / 3);
    expect(s.within1).toBeCloseTo(1 / 3);
    expect(s.within10).toBe(1);
    expect(s.nLong).toBe(2);
    expect(s.relLong).toBeCloseTo(0.2);
    expect(s.inBand).toBeUndefined();
  });

  it("counts the starts inside and below a band when given one", () => {
    const s = score(
      result,
      (p) => p.berth.p50,
      () => ({ p10: 5 * MIN, p90: 15 * MIN }),
    );
    expect(s.inBand).toBeCloseTo(1 / 3);
    expect(s.belowP90).toBeCloseTo(2 / 3);
  });

  it("caps a prediction at 30 days, so an infinite one still counts", () => {
    const s = score(result, () => Number.POSITIVE_INFINITY);
    expect(Number.isFinite(s.biasMin)).toBe(true);
  });

  it("prints shares as whole percents and a missing one as a dash", () => {
    expect(pctf(0.456)).toBe("46 %");
    expect(pctf(undefined)).toBe("—");
    expect(tableRow(score(result, (p) => p.berth.p50))).toEqual({
      "median |err| min": "2.0",
      "bias min": "-2.7",
      "±1 min": "33 %",
      "±10 min": "100 %",
      "rel err (wait>5m)": "20 % (n=2)",
      "in [p10,p90]": "—",
      "≤ p90": "—",
    });
  });
});
