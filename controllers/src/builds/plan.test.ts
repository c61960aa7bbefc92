import { describe, expect, it } from "vitest";
import type { Job, Pod } from "./observed.ts";
import { planBuildLevel } from "./plan.ts";

const now = new Date("2026-11-28T12:00:00.000Z");
const created = "2026-11-28T11:59:00Z";

function aJob(condition?: { type: string; status?: string; reason?: string; message?: string }): Job {
  return {
    metadata: { name: "imgb-1", creationTimestamp: created },
    ...(condition ? { status: { conditions: [{ status: "True", ...condition }] } } : {}),
  };
}
const aPod = (phase: string): Pod => ({ metadata: { name: "imgb-1-x7k2p" }, status: { phase } });

describe("a build's level", () => {
  it.each([
    ["no pod yet", undefined, "Pending", undefined],
    ["its pod pending", "Pending", "Pending", undefined],
    ["its pod running", "Running", "Running", "imgb-1-x7k2p"],
    ["its pod done while the Job has not said so", "Succeeded", "Running", "imgb-1-x7k2p"],
    ["its pod failed while the Job retries", "Failed", "Running", "imgb-1-x7k2p"],
  ])("is %s → %s, following the log once the pod leaves Pending", (_, phase, level, follow) => {
    const plan = planBuildLevel({ buildId: "bld_1", job: aJob(), ...(phase ? { pod: aPod(phase) } : {}), now });
    expect(plan).toEqual({
      ended: false,
      ...(follow ? { followPod: follow } : {}),
      report: { build: "bld_1", phase: level, job_created_at: created, at: now.toISOString() },
    });
  });

  it("is Succeeded once the Job completes, and the log is drained first (ended)", () => {
    const plan = planBuildLevel({ buildId: "bld_1", job: aJob({ type: "Complete" }), pod: aPod("Succeeded"), now });
    expect(plan.ended).toBe(true);
    expect(plan.report).toEqual({ build: "bld_1", phase: "Succeeded", job_created_at: created, at: now.toISOString() });
  });

  it("is Failed with the Job's message, or its reason, or a default", () => {
    const msg = (c: { message?: string; reason?: string }) =>
      planBuildLevel({ buildId: "bld_1", job: aJob({ type: "Failed", ...c }), now }).report.message;
    expect(msg({ message: "BackoffLimitExceeded: 3 attempts", reason: "BackoffLimitExceeded" })).toBe(
      "BackoffLimitExceeded: 3 attempts",
    );
    expect(msg({ reason: "DeadlineExceeded" })).toBe("DeadlineExceeded");
    expect(msg({})).toBe("its Job failed");
    expect(msg({ message: "x".repeat(5000) })).toHaveLength(2048);
  });

  it("ignores a condition that is not True", () => {
    const plan = planBuildLevel({ buildId: "bld_1", job: aJob({ type: "Complete", status: "False" }), now });
    expect(plan.ended).toBe(false);
  });

  it("takes the Job's creation from now when the Job does not carry one yet", () => {
    const job: Job = { metadata: { name: "imgb-1" } };
    expect(planBuildLevel({ buildId: "bld_1", job, now }).report.job_created_at).toBe(now.toISOString());
  });
});
