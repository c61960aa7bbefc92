import { describe, expect, it } from "vitest";
import { sparkline } from "./sparkline.ts";

describe("the sparkline", () => {
  it("draws from zero to the largest value and breaks at gaps", () => {
    const s = sparkline([0, 50, null, 100], 30, 10);
    expect(s.line).toBe("M0.0,9.0L10.0,5.0M30.0,1.0");
    expect(s).toMatchObject({ min: 0, max: 100, last: 100 });
  });
  it("has nothing to draw without data", () => {
    expect(sparkline([null, null], 30, 10)).toEqual({ line: "", area: "", min: 0, max: 0, last: undefined });
  });
});
