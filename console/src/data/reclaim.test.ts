import { describe, expect, it } from "vitest";
import { countdown, pauseReasonText } from "./reclaim.ts";

describe("idle and time-limit words", () => {
  it("says why a session was paused in plain words", () => {
    expect(pauseReasonText("Idle")).toMatch(/nobody used it/);
    expect(pauseReasonText("MaxRuntime")).toMatch(/maximum running time/);
    expect(pauseReasonText("InsufficientCredits")).toMatch(/credits ran out/);
    expect(pauseReasonText("SomethingNew")).toBeUndefined();
    expect(pauseReasonText(null)).toBeUndefined();
  });

  it("counts down to a deadline", () => {
    const now = Date.parse("2026-11-26T10:00:00Z");
    expect(countdown("2026-11-26T10:15:00Z", now)).toBe("in 15 min");
    expect(countdown("2026-11-26T10:04:30.500Z", now)).toBe("in 5 min");
    expect(countdown("2026-11-26T10:00:40Z", now)).toBe("in 40 s");
    expect(countdown("2026-11-26T09:59:00Z", now)).toBe("now");
    expect(countdown("2026-11-26T13:05:00Z", now)).toBe("in 3 h 5 min");
  });
});
