import { describe, expect, it } from "vitest";
import { askedLines, grantBody, preferredOffering } from "./quotas.ts";

describe("the wizard's offering", () => {
  const offerings = [
    { name: "h100", gpu_model: "H100", gpu_count: 1 },
    { name: "a100", gpu_model: "A100", gpu_count: 1 },
    { name: "l4x2", gpu_model: "L4", gpu_count: 2 },
  ];
  const row = (gpu_model: string, free: number, total: number, largest_node = free) => ({
    gpu_model,
    free,
    total,
    largest_node,
  });

  it("opens on the first offering with a GPU free, not on one the fleet lacks", () => {
    expect(preferredOffering(offerings, [row("A100", 2, 4)])).toBe("a100");
  });
  it("needs room for the offering's GPU count on one node", () => {
    expect(preferredOffering(offerings, [row("L4", 2, 8, 1), row("H100", 0, 2)])).toBe("h100");
    expect(preferredOffering(offerings, [row("L4", 2, 8, 2), row("H100", 0, 2)])).toBe("l4x2");
  });
  it("falls back to a model the fleet has (all busy), then to the first", () => {
    expect(preferredOffering(offerings, [row("L4", 0, 8)])).toBe("l4x2");
    expect(preferredOffering(offerings, [])).toBe("h100");
    expect(preferredOffering([], [])).toBeUndefined();
  });
});

describe("granting", () => {
  const asked = { max_gpus_per_user: 8, max_concurrent_sessions_per_user: 6 };
  it("sends no limits when everything asked is granted", () => {
    expect(grantBody(asked, {})).toEqual({ ok: true, limits: undefined });
  });
  it("sends what is granted, an emptied field not granted", () => {
    expect(grantBody(asked, { max_gpus_per_user: "6", max_concurrent_sessions_per_user: "" })).toEqual({
      ok: true,
      limits: { max_gpus_per_user: 6 },
    });
  });
  it("names the first bad field", () => {
    expect(grantBody(asked, { max_gpus_per_user: "9" })).toMatchObject({ ok: false, limit: "max_gpus_per_user" });
    expect(grantBody(asked, { max_gpus_per_user: "six" })).toMatchObject({ ok: false });
    expect(grantBody(asked, { max_gpus_per_user: "", max_concurrent_sessions_per_user: "" })).toMatchObject({
      ok: false,
      problem: expect.stringContaining("deny"),
    });
  });
  it("reads a decided request in words", () => {
    expect(
      askedLines(asked, { max_gpus_per_user: 4, max_concurrent_sessions_per_user: 4 }, { max_gpus_per_user: 6 }),
    ).toEqual(["GPUs at once, per person: 4 → 8 (granted 6)", "Sessions at once, per person: 4 → 6 (not granted)"]);
  });
});
