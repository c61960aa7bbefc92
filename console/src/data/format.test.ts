import { describe, expect, it } from "vitest";
import { formatCredits, formatDuration, formatRelative } from "./format.ts";

describe("formatting", () => {
  it("shows credits from integer minor units without floats", () => {
    expect(formatCredits("150075")).toBe("1,500.75");
    expect(formatCredits("5")).toBe("0.05");
    expect(formatCredits("-1234567")).toBe("−12,345.67");
    expect(formatCredits("900719925474099312345")).toBe("9,007,199,254,740,993,123.45");
    expect(formatCredits(null)).toBe("—");
  });

  it("shows durations and relative times people read at a glance", () => {
    expect(formatDuration(3900)).toBe("1 h 05 min");
    expect(formatDuration(250)).toBe("4 min 10 s");
    expect(formatRelative("2026-01-01T00:00:00Z", Date.parse("2026-01-01T00:03:00Z"))).toBe("3 min ago");
  });
});
