import { describe, expect, it } from "vitest";
import { asSentence, formatCredits, formatDuration, formatRelative } from "./format.ts";

describe("formatting", () => {
  it("shows credits from integer minor units without floats", () => {
    expect(formatCredits("1500750000")).toBe("1,500.75");
    expect(formatCredits("5")).toBe("0.000005");
    expect(formatCredits("2000000")).toBe("2.00");
    expect(formatCredits("-12345670000")).toBe("−12,345.67");
    expect(formatCredits("9007199254740993123450000")).toBe("9,007,199,254,740,993,123.45");
    expect(formatCredits(null)).toBe("—");
  });

  it("shows durations and relative times people read at a glance", () => {
    expect(formatDuration(3900)).toBe("1 h 05 min");
    expect(formatDuration(250)).toBe("4 min 10 s");
    expect(formatRelative("2026-01-01T00:00:00Z", Date.parse("2026-01-01T00:03:00Z"))).toBe("3 min ago");
  });

  it("shows a controller's lower-case message as a sentence", () => {
    expect(asSentence("waiting for 1 × H100 (2 ahead)")).toBe("Waiting for 1 × H100 (2 ahead).");
    expect(asSentence("Node lost.")).toBe("Node lost.");
    expect(asSentence("  ")).toBe("");
  });
});
