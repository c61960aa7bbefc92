// A usage batch the control plane refuses as invalid names its bad samples (details.issues[].path); the
// operator drops those samples' sessions so the rest of the cluster's usage still lands.
import { describe, expect, it } from "vitest";
import { rejectedSessions } from "./operator.ts";

const samples = [{ session: "ses_a" }, { session: "ses_b" }, { session: "ses_c" }];

describe("rejectedSessions", () => {
  it("names the sessions of the samples a validation refusal points at", () => {
    const r = {
      kind: "rejected",
      code: "validation_failed",
      details: {
        issues: [
          { path: ["body", "samples", 1, "end"], message: "a sample spans at most an hour" },
          { path: ["body", "samples", 1, "gpu_memory_mib"], message: "too big" },
          { path: ["body", "cluster_id"], message: "no sample" },
        ],
      },
    };
    expect(rejectedSessions(r, samples)).toEqual(["ses_b"]);
  });

  it("names none for another refusal, which is retried", () => {
    expect(rejectedSessions({ kind: "unavailable", code: "unavailable" }, samples)).toEqual([]);
    expect(rejectedSessions({ kind: "rejected", code: "validation_failed", details: {} }, samples)).toEqual([]);
  });
});
