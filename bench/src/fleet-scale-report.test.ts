import { describe, expect, it } from "vitest";
import { chartSvg, growth, type Measure, planSteps, table } from "./fleet-scale-report.ts";

describe("the fleet-scale bench's steps", () => {
  it("are the issue's sizes at scale 1", () => {
    const steps = planSteps(1);
    expect(steps.map((s) => [s.nodesPerCluster, s.sessions, s.users])).toEqual([
      [100, 1_000, 1_000],
      [500, 5_000, 4_000],
      [2_000, 20_000, 10_000],
    ]);
    expect(steps.every((s) => s.clusters === 3 && s.gpusPerNode === 8 && s.organizations === 100)).toBe(true);
  });

  it("shrink with the scale, rounded up, never below a user per organization", () => {
    expect(planSteps(0.2).map((s) => [s.nodesPerCluster, s.sessions, s.users])).toEqual([
      [20, 200, 200],
      [100, 1_000, 800],
      [400, 4_000, 2_000],
    ]);
    expect(planSteps(0.001).map((s) => [s.nodesPerCluster, s.sessions, s.users])).toEqual([
      [1, 1, 100],
      [1, 5, 100],
      [2, 20, 100],
    ]);
  });

  it("never place more sessions than the fleet has GPUs, and can stop early", () => {
    const [one] = planSteps(0.05, { clusters: 1, gpusPerNode: 2, steps: 1 });
    expect(one).toMatchObject({ nodesPerCluster: 5, sessions: 10 });
    expect(planSteps(0.5, { steps: 2 })).toHaveLength(2);
  });

  it("refuse a scale outside (0, 1]", () => {
    expect(() => planSteps(0)).toThrow(RangeError);
    expect(() => planSteps(2)).toThrow(RangeError);
  });
});

describe("the fleet-scale bench's figures", () => {
  it("say how much a per-unit cost grew from the first step to the last", () => {
    expect(growth([10, 11, 12.5])).toBeCloseTo(0.25);
    expect(growth([Number.NaN, 4, 2])).toBeCloseTo(-0.5);
    expect(growth([0, 1])).toBeNaN();
  });

  const m: Measure = {
    key: "rss",
    title: "Resident memory",
    unit: "MB",
    x: "running sessions",
    xs: [200, 1_000, 4_000],
    series: [
      { name: "api", values: [120.5, 140, 210] },
      { name: "worker <leader>", values: [90, Number.NaN, 300] },
    ],
  };

  it("print a table per measure, a row per step", () => {
    expect(table(m).split("\n")).toEqual([
      "Resident memory (MB)",
      "| running sessions | api | worker <leader> |",
      "|------------------|-----|-----------------|",
      "|              200 | 121 |            90.0 |",
      "|            1,000 | 140 |             n/a |",
      "|            4,000 | 210 |             300 |",
    ]);
  });

  it("draw a line per series, leaving out steps not taken, with names escaped", () => {
    const svg = chartSvg(m);
    expect(svg.startsWith("<svg ")).toBe(true);
    expect(svg.match(/<polyline /g)).toHaveLength(2);
    expect(svg.match(/<circle /g)).toHaveLength(5);
    expect(svg).toContain("worker &lt;leader&gt;");
    expect(svg).not.toContain("NaN");
  });
});
