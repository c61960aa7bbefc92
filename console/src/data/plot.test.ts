import { expect, describe as group, it } from "vitest";
import { describe, formatValue, nextIndex, summarize, toColumns } from "./plot.ts";

const answer = {
  timestamps: [0, 15, 30, 45],
  series: [
    { label: "GPU-1", values: [10, null, 30, 20] },
    { label: "GPU-2", values: [null, null, null, null] },
  ],
};

group("plot data", () => {
  it("turns an answer into uPlot's columns", () => {
    expect(toColumns(answer)).toEqual([
      [0, 15, 30, 45],
      [10, null, 30, 20],
      [null, null, null, null],
    ]);
  });

  it("summarizes each series for the text alternative, gaps skipped", () => {
    expect(summarize(answer)[0]).toEqual({ label: "GPU-1", latest: 20, min: 10, max: 30, mean: 20 });
    expect(summarize(answer)[1]?.latest).toBeNull();
    expect(describe("Utilisation", answer, "percent")).toBe(
      "Utilisation. GPU-1: now 20 %, between 10 % and 30 %; GPU-2: now no data, between no data and no data.",
    );
    expect(describe("Utilisation", { timestamps: [], series: [] }, "percent")).toBe(
      "Utilisation: no data in this range.",
    );
  });

  it("formats units people read", () => {
    expect(formatValue(81_559, "MiB")).toBe("79.6 GiB");
    expect(formatValue(512, "MiB")).toBe("512 MiB");
    expect(formatValue(71.6, "C")).toBe("72 °C");
    // The gateway's latency and rates: a decimal only while it still says something.
    expect(formatValue(4.26, "ms")).toBe("4.3 ms");
    expect(formatValue(180.4, "ms")).toBe("180 ms");
    expect(formatValue(0.333, "per_s")).toBe("0.33/s");
    expect(formatValue(21.6, "per_s")).toBe("22/s");
  });

  it("moves the keyboard cursor over samples that have a value", () => {
    expect(nextIndex(answer, 0, 1)).toBe(2);
    expect(nextIndex(answer, 3, 1)).toBe(3);
    expect(nextIndex(answer, 2, -1)).toBe(0);
  });
});
