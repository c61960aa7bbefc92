import { describe, expect, it } from "vitest";
import { type Condition, findCondition, isConditionTrue, setCondition, toTimestamp } from "./conditions.ts";

const t0 = new Date("2026-01-01T00:00:00.123Z");
const t1 = new Date("2026-01-01T00:05:00Z");
const ready = (status: Condition["status"], reason = "PodRunning") => ({ type: "Ready", status, reason, message: "" });

describe("setCondition", () => {
  it("adds a missing condition stamped with the current time in whole seconds", () => {
    expect(setCondition(undefined, ready("True"), t0)).toEqual([
      { ...ready("True"), lastTransitionTime: "2026-01-01T00:00:00Z" },
    ]);
  });

  it("keeps lastTransitionTime when only the reason or message changes", () => {
    const before = setCondition([], ready("False", "PodPending"), t0);
    const after = setCondition(before, { ...ready("False", "ImagePullFailed"), message: "not found" }, t1);
    expect(after[0]).toMatchObject({ reason: "ImagePullFailed", lastTransitionTime: toTimestamp(t0) });
  });

  it("moves lastTransitionTime when the status flips", () => {
    const after = setCondition(setCondition([], ready("False"), t0), ready("True"), t1);
    expect(after[0]?.lastTransitionTime).toBe("2026-01-01T00:05:00Z");
  });

  it("returns the same array when nothing changes, so a reconciler can skip the write", () => {
    const before = setCondition([], ready("True"), t0);
    expect(setCondition(before, ready("True"), t1)).toBe(before);
  });

  it("leaves other conditions in place", () => {
    const before = setCondition(
      setCondition([], { type: "Scheduled", status: "True", reason: "Placed", message: "" }, t0),
      ready("False"),
      t0,
    );
    const after = setCondition(before, ready("True"), t1);
    expect(after.map((c) => c.type)).toEqual(["Scheduled", "Ready"]);
    expect(findCondition(after, "Scheduled")).toBe(before[0]);
    expect(isConditionTrue(after, "Ready")).toBe(true);
    expect(isConditionTrue(after, "Billable")).toBe(false);
  });
});
