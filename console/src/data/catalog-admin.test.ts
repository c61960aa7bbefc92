import { describe, expect, it } from "vitest";
import { byTier, catalogTab, OFFERING_FORM, POLICY_FORM } from "./catalog-admin.ts";

describe("catalog administration forms", () => {
  it("builds an offering's create body with the rate in minor units, and refuses a missing field", () => {
    const v = {
      name: "b200",
      display_name: "B200",
      gpu_model: "B200",
      tier: "premium",
      hourly_credit_rate: "6.5",
      enabled: "true",
    };
    expect(OFFERING_FORM.build(v, true)).toEqual({
      ok: true,
      body: { ...v, hourly_credit_rate: "6500000", enabled: true },
    });
    expect(OFFERING_FORM.build({ ...v, tier: "" }, true)).toMatchObject({ ok: false, field: "tier" });
  });

  it("leaves the name out of a change, and reads an offering back into the form", () => {
    const o = {
      name: "l4",
      display_name: "L4",
      gpu_model: "L4",
      tier: "budget",
      gpu_count: 1,
      hourly_credit_rate: "1000000",
      description: null,
      enabled: false,
    };
    const values = OFFERING_FORM.values(o);
    expect(values).toMatchObject({ hourly_credit_rate: "1", enabled: "false", description: "" });
    const built = OFFERING_FORM.build(values, false);
    expect(built.ok && built.body).toEqual({
      display_name: "L4",
      gpu_model: "L4",
      tier: "budget",
      gpu_count: 1,
      fraction: "1",
      hourly_credit_rate: "1000000",
      enabled: false,
    });
  });

  it("builds a policy: scope at creation, limits as a whole, empty ones dropped", () => {
    const base = POLICY_FORM.values({});
    const created = POLICY_FORM.build(
      { ...base, name: "team", scope_kind: "project", scope_id: "prj_1", max_gpus_per_project: "8" },
      true,
    );
    expect(created).toEqual({
      ok: true,
      body: { name: "team", scope: { kind: "project", id: "prj_1" }, limits: { max_gpus_per_project: 8 } },
    });
    const changed = POLICY_FORM.build({ ...base, max_gpus_per_user: "2", allowed_offerings: "h100, l4" }, false);
    expect(changed).toEqual({
      ok: true,
      body: { limits: { max_gpus_per_user: 2 }, allowed_offerings: ["h100", "l4"] },
    });
    expect(POLICY_FORM.build({ ...base, max_gpus_per_user: "two" }, false)).toMatchObject({
      ok: false,
      field: "max_gpus_per_user",
    });
  });

  it("groups offerings by tier, cheapest first, and reads the tab from the URL", () => {
    const o = (name: string, tier: string, rate: string) => ({ name, tier, hourly_credit_rate: rate });
    expect(
      byTier([o("h100", "premium", "4000000"), o("l4", "budget", "1000000"), o("a100", "premium", "3000000")]),
    ).toEqual([
      ["budget", [o("l4", "budget", "1000000")]],
      ["premium", [o("a100", "premium", "3000000"), o("h100", "premium", "4000000")]],
    ]);
    expect(catalogTab(new URLSearchParams("tab=policies"))).toBe("policies");
    expect(catalogTab(new URLSearchParams("tab=nope"))).toBe("offerings");
  });
});
