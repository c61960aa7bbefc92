import { describe, expect, it } from "vitest";
import { timeline } from "./timeline.ts";

describe("a session's timeline", () => {
  it("tells what happened and why, oldest first", () => {
    const t = timeline({
      created_at: "2026-11-22T10:00:00Z",
      queued_at: "2026-11-22T10:00:01Z",
      scheduled_at: "2026-11-22T10:05:00Z",
      started_at: "2026-11-22T10:05:03Z",
      cluster_id: "clu_a",
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "PodRunning",
          message: "pod is ready",
          last_transition_time: "2026-11-22T10:05:03Z",
        },
        {
          type: "Scheduled",
          status: "True",
          reason: "Placed",
          message: "clu_a has a free H100",
          last_transition_time: "2026-11-22T10:05:00Z",
        },
      ],
    });
    expect(t.map((e) => e.title)).toEqual([
      "Created",
      "Queued",
      "Scheduled",
      "Placed on a cluster",
      "Started",
      "Ready",
    ]);
    expect(t[3]?.detail).toBe("Placed: clu_a has a free H100");
  });

  it("marks failures as such", () => {
    const t = timeline({
      created_at: "2026-11-22T10:00:00Z",
      conditions: [
        {
          type: "Ready",
          status: "False",
          reason: "ImagePullFailed",
          message: "no such image",
          last_transition_time: "2026-11-22T10:01:00Z",
        },
      ],
    });
    expect(t.at(-1)).toMatchObject({ title: "Not ready", tone: "bad", detail: "ImagePullFailed: no such image" });
  });

  it("says a borrowed session is charged at the borrowed rate, not the offering's", () => {
    const billable = {
      type: "Billable",
      status: "True",
      reason: "Metering",
      message: "usage is charged at the offering's rate",
      last_transition_time: "2026-11-22T10:05:03Z",
    };
    const at = (s: Parameters<typeof timeline>[0]) => timeline(s).find((e) => e.title === "Billing started")?.detail;
    const base = { created_at: "2026-11-22T10:00:00Z", conditions: [billable] };
    expect(at({ ...base, capacity_class: "borrowed", rate_multiplier: 0.3 })).toBe(
      "Metering: usage is charged at the borrowed rate, 0.3× the offering's rate",
    );
    expect(at({ ...base, capacity_class: "guaranteed", rate_multiplier: 1 })).toBe(
      "Metering: usage is charged at the offering's rate",
    );
  });

  it("keeps Created first when a condition was set in the same second (conditions carry whole seconds)", () => {
    const t = timeline({
      created_at: "2026-11-29T16:57:00.412Z",
      queued_at: "2026-11-29T16:57:00.415Z",
      conditions: [
        {
          type: "Scheduled",
          status: "False",
          reason: "NoCapacity",
          message: "waiting for 1 × H100",
          last_transition_time: "2026-11-29T16:57:00Z",
        },
      ],
    });
    expect(t.map((e) => e.title)).toEqual(["Created", "Queued", "Not placed"]);
  });
});
