import { describe, expect, it } from "vitest";
import { costOf, sessionRate } from "../credits/money.ts";
import { allowedActions, assertAllowed } from "./actions.ts";
import { credits } from "./previewCost.ts";

describe("the action-phase matrix", () => {
  it.each([
    ["Pending", "Running", ["pause", "terminate"]],
    ["Queued", "Running", ["pause", "terminate"]],
    ["Starting", "Running", ["pause", "terminate"]],
    ["Running", "Running", ["pause", "restart", "terminate"]],
    ["Restarting", "Running", ["pause", "terminate"]],
    ["Pausing", "Paused", ["terminate"]],
    ["Paused", "Paused", ["resume", "terminate"]],
    ["Resuming", "Running", ["pause", "terminate"]],
    ["Unknown", "Running", ["pause", "terminate"]],
    ["Failed", "Running", ["terminate"]],
    ["Terminating", "Terminated", []],
    ["Terminated", "Terminated", []],
    // Asked for but not reached yet: no second request, only terminate.
    ["Running", "Paused", ["terminate"]],
    ["Running", "Terminated", []],
  ])("a %s session (desired %s) allows %j", (phase, desired, allowed) => {
    expect(allowedActions(phase, desired)).toEqual(allowed);
  });

  it("refuses with invalid_session_state, the phase and what is allowed", () => {
    expect(() => assertAllowed("resume", "Running", "Running")).toThrowError(
      expect.objectContaining({
        code: "invalid_session_state",
        details: {
          action: "resume",
          phase: "Running",
          desired_state: "Running",
          allowed_actions: ["pause", "restart", "terminate"],
        },
      }),
    );
  });
});

describe("cost", () => {
  it("scales the offering's rate to the session's GPUs and rounds a duration's cost up to a unit", () => {
    expect(costOf(sessionRate(4_000_000n, 1, 2), 3600)).toBe(8_000_000n);
    expect(costOf(sessionRate(4_000_000n, 1, 1), 1)).toBe(1112n); // 1111.1… rounded up
    // 7 credits/h for 2 GPUs, one GPU for an hour: 3.5 credits, exact until the end.
    expect(costOf(sessionRate(7_000_000n, 2, 1), 3600)).toBe(3_500_000n);
    expect(costOf(sessionRate(1_000_000n, 3, 1), 3600)).toBe(333_334n); // 333,333.3… rounded up
    expect(credits(1_500_000n)).toBe("1.5");
    expect(credits(4_000_000n)).toBe("4");
  });
});
