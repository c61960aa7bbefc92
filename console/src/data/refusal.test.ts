import { describe, expect, it } from "vitest";
import { describeRefusal, shortCredits, spokenDuration } from "./refusal.ts";

const CREDIT = 1_000_000n;
const credits = (n: number) => (BigInt(Math.round(n * 100)) * (CREDIT / 100n)).toString();
const quota = (details: Record<string, unknown>, message = "the API's own words") => ({
  code: "quota_exceeded",
  message,
  details,
});

describe("why a session cannot start, in plain words", () => {
  it("says how long the credits last against the minimum run at the session's rate", () => {
    // 4 credits/h; 0.27 credits last 4 minutes; the minimum run of 10 minutes costs 0.67.
    const t = describeRefusal(
      quota({
        limit: "credits",
        value: credits(0.27),
        reserved: "0",
        required: "666667",
        hourly_rate: credits(4),
        minimum_run_seconds: 600,
        sessions_let_in: 0,
      }),
      { organizationId: "org_1", cost: credits(4) },
    );
    expect(t.headline).toBe("Not enough credits to start");
    expect(t.explanation).toBe("Your credits cover 4 minutes; a session needs 10 minutes at 4 credits/h.");
    // Enough for the chosen hour, rounded up to whole credits.
    expect(t.remedy).toEqual({
      kind: "ask-credits",
      label: "Ask for credits",
      href: "/credits/requests?org=org_1&amount=4",
    });
  });

  it("counts the credits kept for the organization's sessions already let in", () => {
    const t = describeRefusal(
      quota({
        limit: "credits",
        value: credits(1),
        reserved: credits(0.8),
        required: "666667",
        hourly_rate: credits(4),
        minimum_run_seconds: 600,
        sessions_let_in: 2,
      }),
    );
    expect(t.explanation).toBe(
      "Your credits cover 3 minutes once 0.80 credits are kept for the 2 sessions already started in your organization; a session needs 10 minutes at 4 credits/h.",
    );
    expect(t.remedy).toMatchObject({ kind: "ask-credits", href: "/credits/requests?amount=1" });
  });

  it("says the credits are used up when nothing is left", () => {
    const t = describeRefusal(
      quota({ limit: "credits", value: "0", reserved: "0", required: credits(1), hourly_rate: credits(6) }),
    );
    expect(t.explanation).toBe("Your credits are used up; a session needs 10 minutes at 6 credits/h.");
  });

  it("explains a wallet's spending limit and when it resets", () => {
    const t = describeRefusal(
      quota({
        limit: "maxSpendPerDay",
        value: credits(20),
        spent: credits(19.5),
        available: credits(0.5),
        required: "666667",
        owner_kind: "user",
        resets_at: "2026-11-23T00:00:00.000Z",
        minimum_run_seconds: 600,
      }),
      { hourlyRate: credits(4), formatTime: (iso) => `at ${iso.slice(11, 16)} UTC` },
    );
    expect(t.headline).toBe("A daily spending limit is reached");
    expect(t.explanation).toBe(
      "Your wallet's daily limit is 20 credits and 19.50 are spent; 0.50 credits are left within it; a session needs 10 minutes at 4 credits/h. The limit resets at 00:00 UTC.",
    );
    expect(t.remedy.kind).toBe("ask-admin");
  });

  it("explains the organization's budget", () => {
    const t = describeRefusal(
      quota({
        limit: "organizationBudget",
        value: credits(100),
        spent: credits(99.9),
        reserved: "0",
        required: "666667",
        period: "monthly",
      }),
      { hourlyRate: credits(4) },
    );
    expect(t.explanation).toBe(
      "The organization's monthly budget has 0.10 credits left; a session needs 10 minutes at 4 credits/h.",
    );
  });

  it("explains the policy's limits with what to do", () => {
    const sessions = describeRefusal(
      quota({ limit: "maxConcurrentSessionsPerUser", value: 4, current: 4, requested: 1, scope: "global" }),
    );
    expect(sessions.explanation).toBe("You have 4 running or waiting sessions and may have at most 4.");
    expect(sessions.remedy).toMatchObject({ kind: "free-a-slot", href: "/sessions" });
    const gpus = describeRefusal(quota({ limit: "maxGpusPerProject", value: 8, current: 8, requested: 2 }));
    expect(gpus.explanation).toBe("Your project uses 8 of 8 GPUs; this session needs 2 more.");
    expect(gpus.remedy.kind).toBe("ask-admin");
    const offering = describeRefusal(quota({ limit: "allowedOfferings", value: ["l4"], requested: "h100" }));
    expect(offering.explanation).toBe("Your resource policy does not allow h100.");
    expect(offering.remedy.kind).toBe("other-offering");
  });

  it("names the models the fleet has when the offering's is missing", () => {
    const t = describeRefusal({
      code: "gpu_model_unavailable",
      message: "no cluster has NVIDIA-B200",
      details: { reported_models: ["NVIDIA-H100-80GB-HBM3", "NVIDIA-L4"] },
    });
    expect(t.explanation).toBe(
      "The fleet offers NVIDIA-H100-80GB-HBM3, NVIDIA-L4 now; choose an offering with one of them.",
    );
  });

  it("keeps the API's message for what it does not know", () => {
    expect(describeRefusal(quota({ limit: "somethingNew" }, "at most 3 of something")).explanation).toBe(
      "at most 3 of something",
    );
    expect(
      describeRefusal({ code: "validation_failed", message: "which organization?", details: {} }).explanation,
    ).toBe("which organization?");
  });

  it("speaks durations and amounts as people say them", () => {
    expect(spokenDuration(59)).toBe("less than a minute");
    expect(spokenDuration(60)).toBe("1 minute");
    expect(spokenDuration(5400)).toBe("1 hour 30 minutes");
    expect(spokenDuration(7200)).toBe("2 hours");
    expect(shortCredits(credits(4))).toBe("4");
    expect(shortCredits("666667")).toBe("0.666667");
  });
});
