import { describe, expect, it } from "vitest";
import { countdown, outOfBoundsText, pauseReasonText, reclaimAskProblems, suspendedText } from "./reclaim.ts";

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

describe("the wizard's idle and running-time asks", () => {
  const rules = { timeout_minutes: 60, min_timeout_minutes: 20, max_timeout_minutes: 480, max_runtime_minutes: 1440 };
  it("accepts what the policy allows, or nothing asked", () => {
    expect(reclaimAskProblems(rules, undefined, undefined)).toEqual({});
    expect(reclaimAskProblems(rules, 20, 1440)).toEqual({});
    expect(reclaimAskProblems(rules, 480, 1)).toEqual({});
  });
  it("says the bounds in words when an ask is outside them", () => {
    expect(reclaimAskProblems(rules, 10, undefined).idle).toBe(
      "Your resource policy allows an idle timeout between 20 min and 8 h.",
    );
    expect(reclaimAskProblems(rules, 30.5, undefined).idle).toBe("Give the idle timeout in whole minutes.");
    expect(reclaimAskProblems(rules, undefined, 1500).runtime).toBe(
      "Your resource policy allows at most 24 h of running time.",
    );
    expect(reclaimAskProblems(rules, undefined, 0).runtime).toBe("Give the maximum running time in whole minutes.");
  });
  it("ignores the idle ask when the policy turns idle pausing off (the API does too)", () => {
    expect(reclaimAskProblems({ ...rules, timeout_minutes: 0 }, 5, undefined)).toEqual({});
  });
  it("words the API's refusal", () => {
    expect(outOfBoundsText({ field: "idle_timeout_minutes", value: 5, min: 20, max: 90 })).toBe(
      "An idle timeout of 5 min is outside your resource policy's bounds: choose between 20 min and 1 h 30 min.",
    );
    expect(outOfBoundsText({ field: "max_runtime_minutes", value: 2000, min: 1, max: 480 })).toBe(
      "A maximum running time of 33 h 20 min is over your resource policy's ceiling: choose at most 8 h.",
    );
    expect(outOfBoundsText({})).toBeUndefined();
  });
});

describe("a suspended idle rule in words", () => {
  it("names the missing signals", () => {
    expect(suspendedText([])).toBeUndefined();
    expect(suspendedText(["gpu"])).toMatch(/^Idle pausing is suspended for this session: no GPU utilisation readings/);
    expect(suspendedText(["gpu", "traffic", "notebook"])).toContain(
      "no GPU utilisation readings reach Berth from its cluster, its cluster's session gateway has not reported and its notebook server does not answer.",
    );
  });
});
