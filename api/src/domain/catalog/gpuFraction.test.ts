import { describe, expect, it } from "vitest";
import { DomainError, Invalid } from "../../errors.ts";
import { checkFraction, parseFraction } from "./gpuFraction.ts";

const codeOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e instanceof DomainError ? { code: e.code, details: e.details } : String(e);
  }
  return undefined;
};

describe("an offering's GPU fraction", () => {
  it("takes 1, 1/2, 1/4, 1/8, 1/16 and 1/32", () => {
    expect(["1", "1/2", "1/4", "1/8", "1/16", "1/32"].map(parseFraction)).toEqual([undefined, 2, 4, 8, 16, 32]);
  });

  it.each(["1/3", "2/3", "1/64", "1/12", "0.5", "", "1/0", "1/032"])(
    "refuses %j with gpu_fraction_not_offered and the fractions offered",
    (f) => {
      expect(codeOf(() => parseFraction(f))).toEqual({
        code: "gpu_fraction_not_offered",
        details: { fraction: f, allowed: ["1", "1/2", "1/4", "1/8", "1/16", "1/32"] },
      });
    },
  );

  it("refuses a slice under 1 GiB, naming the largest fraction that meets it", () => {
    expect(codeOf(() => checkFraction({ gpuCount: 1, gpuMemoryMib: 4096, slicesPerCard: 8 }))).toEqual({
      code: "gpu_slice_too_small",
      details: { fraction: "1/8", slice_memory_mib: 512, minimum_mib: 1024, largest_fraction: "1/4" },
    });
    expect(codeOf(() => checkFraction({ gpuCount: 1, gpuMemoryMib: 1500, slicesPerCard: 2 }))).toMatchObject({
      code: "gpu_slice_too_small",
      details: { largest_fraction: null },
    });
  });

  it("offers 1/32 of an 80 GB card but refuses it on a 24 GB one, whose message names 1/16", () => {
    expect(() => checkFraction({ gpuCount: 1, gpuMemoryMib: 81559, slicesPerCard: 32 })).not.toThrow();
    let err: unknown;
    try {
      checkFraction({ gpuCount: 1, gpuMemoryMib: 23034, slicesPerCard: 32 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DomainError);
    const e = err as DomainError;
    expect({ code: e.code, details: e.details }).toEqual({
      code: "gpu_slice_too_small",
      details: { fraction: "1/32", slice_memory_mib: 719, minimum_mib: 1024, largest_fraction: "1/16" },
    });
    expect(e.message).toBe(
      "a 1/32 slice of a 23034 MiB card has 719 MiB; the least the sharing layer isolates is 1024 MiB; the finest slice that fits is 1/16",
    );
    expect(() => checkFraction({ gpuCount: 1, gpuMemoryMib: 23034, slicesPerCard: 16 })).not.toThrow();
  });

  it("needs one card and the model's memory", () => {
    let err: unknown;
    try {
      checkFraction({ gpuCount: 2, slicesPerCard: 4 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(Invalid);
    expect((err as Invalid).issues.map((i) => i.path.join("."))).toEqual(["body.gpu_count", "body.gpu_memory_mib"]);
  });

  it("accepts whole cards and a well-formed slice", () => {
    expect(() => checkFraction({ gpuCount: 8 })).not.toThrow();
    expect(() => checkFraction({ gpuCount: 1, gpuMemoryMib: 81559, slicesPerCard: 8 })).not.toThrow();
  });
});
