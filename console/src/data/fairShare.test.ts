import { describe, expect, it } from "vitest";
import { gpus, hours, reclaimState, type StandingLike, share, shareRows, weighted } from "./fairShare.ts";

const standing = (id: string, models: StandingLike["models"] = []): StandingLike => ({
  id,
  name: id,
  weight: 1,
  fair_share: 0.5,
  usage_share: 0.25,
  weighted_share: 0.5,
  decayed_usage_gpu_hours: 3,
  models,
});
const m = (gpu_model: string) => ({ gpu_model, guaranteed: 2, used: 1, borrowed: 0.25, lent: 0 });

describe("the fair-share page's rows", () => {
  it("lists an organization, then each project followed by its users, one row per model", () => {
    const rows = shareRows({
      ...standing("org", [m("H100"), m("A100")]),
      projects: [{ ...standing("p1", [m("H100")]), users: [standing("u1", [m("H100")]), standing("u2")] }],
    });
    expect(rows.map((r) => [r.level, r.id, r.model?.gpu_model ?? null, r.first])).toEqual([
      ["organization", "org", "H100", true],
      ["organization", "org", "A100", false],
      ["project", "p1", "H100", true],
      ["user", "u1", "H100", true],
      ["user", "u2", null, true],
    ]);
  });

  it("writes GPUs, shares and the weighted share plainly", () => {
    expect([gpus(2), gpus(0.25), gpus(1 / 3)]).toEqual(["2", "0.25", "0.33"]);
    expect([share(0.75), share(0.05), share(0)]).toEqual(["75 %", "5.0 %", "0 %"]);
    expect(weighted(4)).toEqual({ text: "4.00×", tone: "warn" });
    expect(weighted(1)).toEqual({ text: "1.00×", tone: "ok" });
    expect(weighted(0).tone).toBe("info");
    expect([hours(0), hours(0.001), hours(0.25), hours(123.45)]).toEqual(["0", "< 0.01", "0.25", "123.5"]);
  });

  it("says where a reclaim stands", () => {
    const r = { paused_at: null, resumed_at: null, withdrawn_at: null };
    expect(reclaimState(r).text).toBe("Warned");
    expect(reclaimState({ ...r, paused_at: "t" }).text).toBe("Paused");
    expect(reclaimState({ ...r, paused_at: "t", resumed_at: "t" }).text).toBe("Resumed");
    expect(reclaimState({ ...r, withdrawn_at: "t" }).text).toBe("Withdrawn");
  });
});
