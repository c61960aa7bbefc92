import { describe, expect, it } from "vitest";
import { gpuOccupancy } from "./gpu-sharing.ts";
import { checkMigLayout, MIG_PROFILES, migProfileOf, migRate, migResourcesOf, migShare } from "./mig.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";
const A100_40 = "NVIDIA-A100-SXM4-40GB";

describe("MIG profiles and their share of a card", () => {
  it.each([
    ["1g.10gb", 1, 7],
    ["1g.20gb", 1, 4],
    ["2g.20gb", 2, 7],
    ["3g.40gb", 1, 2],
    ["4g.40gb", 4, 7],
    ["7g.80gb", 1, 1],
  ])("an H100's %s is the larger of compute of 7 and memory of 8: %i/%i", (name, num, den) => {
    const p = migProfileOf(H100, name);
    expect(p).toBeDefined();
    expect(migShare(p as NonNullable<typeof p>)).toEqual({ num, den });
  });

  it("knows a 40 GB card's profiles apart from an 80 GB card's", () => {
    expect(migProfileOf(A100_40, "1g.5gb")).toBeDefined();
    expect(migProfileOf(H100, "1g.5gb")).toBeUndefined();
    expect(migProfileOf("NVIDIA-L4", "1g.10gb")).toBeUndefined();
  });

  it("never lets one card's instances of a profile exceed the card", () => {
    for (const profiles of Object.values(MIG_PROFILES))
      for (const p of profiles) {
        expect(p.computeSlices * p.maxPerCard).toBeLessThanOrEqual(7);
        expect(p.memorySlices * p.maxPerCard).toBeLessThanOrEqual(8);
      }
  });

  it("bills a profile at its share of the whole card's rate, rounded down to the minor unit", () => {
    const whole = 4_000_000;
    expect(migRate(whole, { num: 1, den: 7 })).toBe(571_428);
    expect(migRate(whole, { num: 1, den: 2 })).toBe(2_000_000);
    expect(migRate(whole, { num: 4, den: 7 })).toBe(2_285_714);
  });

  it("counts seven 1g.10gb as one card's occupancy, up to floating point", () => {
    let sum = 0;
    for (let i = 0; i < 7; i++) sum += gpuOccupancy(1, undefined, { num: 1, den: 7 });
    expect(sum).toBeCloseTo(1, 12);
    expect(gpuOccupancy(1, 8, null)).toBe(0.125);
  });
});

describe("checking a layout of one card", () => {
  it("accepts layouts that fill the card exactly", () => {
    expect(checkMigLayout(H100, { "1g.10gb": 7 })).toBeUndefined();
    expect(checkMigLayout(H100, { "3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2 })).toBeUndefined();
    expect(checkMigLayout(H100, { "4g.40gb": 1, "3g.40gb": 1 })).toBeUndefined();
  });

  it("refuses a profile no card has, naming it", () => {
    expect(checkMigLayout(H100, { "5g.50gb": 1 })).toEqual({ code: "mig_profile_unknown", profile: "5g.50gb" });
  });

  it("refuses another model's profile, listing the model's", () => {
    const p = checkMigLayout(A100_40, { "1g.20gb": 1 });
    expect(p?.code).toBe("mig_profile_not_for_model");
    expect(p && "allowed" in p ? p.allowed : []).toContain("1g.10gb");
    expect(checkMigLayout("NVIDIA-L4", { "1g.10gb": 1 })?.code).toBe("mig_profile_not_for_model");
    // A model name is the request's text: the table's prototype keys are no models.
    for (const model of ["constructor", "__proto__", "toString"])
      expect(checkMigLayout(model, { "1g.10gb": 1 })?.code).toBe("mig_profile_not_for_model");
  });

  it("refuses a layout over the card's 7 compute or 8 memory slices, or a profile over its own bound", () => {
    expect(checkMigLayout(H100, { "3g.40gb": 2, "1g.10gb": 1 })).toEqual({
      code: "mig_layout_overfilled",
      computeSlices: 7,
      memorySlices: 9,
    });
    expect(checkMigLayout(H100, { "4g.40gb": 2 })).toMatchObject({
      code: "mig_layout_overfilled",
      profile: "4g.40gb",
      maxPerCard: 1,
    });
  });
});

describe("reading a node's MIG resources", () => {
  it("keeps nvidia.com/mig-* with a positive count and nothing else", () => {
    expect(
      migResourcesOf({ "nvidia.com/gpu": "0", "nvidia.com/mig-1g.10gb": "14", "nvidia.com/mig-3g.40gb": 0, cpu: "8" }),
    ).toEqual({ "1g.10gb": 14 });
  });
});
