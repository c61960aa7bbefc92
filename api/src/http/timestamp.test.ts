import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isoTimestamp } from "./timestamp.ts";

describe("isoTimestamp: exactly toISOString", () => {
  it.each([
    0, -1, 1, 951_782_400_000, 951_868_799_999, 1_795_350_896_789, -62_167_219_200_000, 253_402_300_799_999,
    -62_167_219_200_001, 253_402_300_800_000, 8.64e15, -8.64e15,
  ])("agrees at %d ms", (t) => {
    expect(isoTimestamp(new Date(t))).toBe(new Date(t).toISOString());
  });

  it("agrees on any instant a Date can hold", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -8.64e15, max: 8.64e15 }),
        (t) => isoTimestamp(new Date(t)) === new Date(t).toISOString(),
      ),
      { numRuns: 20_000 },
    );
    fc.assert(
      fc.property(
        fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }),
        (t) => isoTimestamp(new Date(t)) === new Date(t).toISOString(),
      ),
      { numRuns: 50_000 },
    );
  });

  it("throws like toISOString on an invalid Date", () => {
    expect(() => isoTimestamp(new Date(Number.NaN))).toThrow(RangeError);
  });
});
