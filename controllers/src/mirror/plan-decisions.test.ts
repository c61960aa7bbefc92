// The mirror plan's decisions that plan.test.ts and claims-plan.test.ts do not reach, one case each:
// written when planMirror was split into one function per decision, to hold each branch's answer.
import type { SessionMirror } from "@berth/crds";
import { examples } from "@berth/crds/testing";
import { describe, expect, it } from "vitest";
import { type PodView, planMirror } from "./plan.ts";

const opts = { namespace: "berth-sessions" };
const now = new Date("2026-11-26T06:00:00Z");

function aMirror(): SessionMirror {
  const m = examples.SessionMirror();
  m.metadata = { name: "ses-abc", namespace: "berth-sessions", uid: "uid-1", generation: 1 };
  return m;
}

const ours = [{ apiVersion: "berth.dev/v1alpha1", kind: "SessionMirror", name: "ses-abc", uid: "uid-1" }];

function aPod(status: PodView["status"], node?: string): PodView {
  return {
    metadata: { name: "ses-abc", uid: "pod-uid", labels: { "berth.dev/restart": "0" }, ownerReferences: ours },
    spec: node ? { nodeName: node } : {},
    status,
  };
}

describe("the mirror plan's single decisions", () => {
  it("fails a session whose container cannot be configured, with the kubelet's words", () => {
    const pod = aPod(
      {
        phase: "Pending",
        containerStatuses: [
          { name: "session", state: { waiting: { reason: "CreateContainerConfigError", message: "no secret x" } } },
        ],
      },
      "n1",
    );
    expect(planMirror({ mirror: aMirror(), pod }, opts).report).toEqual({
      phase: "Failed",
      node: "n1",
      reason: "PodFailed",
      message: "no secret x",
    });
  });

  it("replaces a pod that stopped by itself", () => {
    const p = planMirror({ mirror: aMirror(), pod: aPod({ phase: "Succeeded" }) }, opts);
    expect(p.actions).toEqual([{ kind: "deletePod", name: "ses-abc", uid: "pod-uid" }]);
    expect(p.report).toEqual({ phase: "Starting", reason: "PodPending", message: "the pod stopped; replacing it" });
  });

  it("fails a session whose pod failed, with the pod's message", () => {
    const pod = aPod({ phase: "Failed", reason: "OOMKilled", message: "out of memory" }, "n1");
    const p = planMirror({ mirror: aMirror(), pod }, opts);
    expect(p.actions).toEqual([]);
    expect(p.report).toEqual({ phase: "Failed", node: "n1", reason: "PodFailed", message: "out of memory" });
  });

  it("says a scheduled pod is starting, and an unscheduled one waits for a node", () => {
    expect(planMirror({ mirror: aMirror(), pod: aPod({ phase: "Pending" }, "n1") }, opts).report.message).toBe(
      "the pod is starting",
    );
    expect(planMirror({ mirror: aMirror(), pod: aPod({ phase: "Pending" }) }, opts).report.message).toBe(
      "waiting for a node",
    );
  });

  it("looks at a pending claim again soon while a bind is likely, then less often", () => {
    const mirror = aMirror();
    mirror.spec.volumes = [
      {
        claimName: "berth-vol-a",
        volumeId: "vol_a",
        storageClass: "berth-shared",
        sizeGb: 1,
        dataPath: "berth/volumes/vol-a",
        mountPath: "/home/jovyan/work",
        readOnly: false,
      },
    ];
    const pending = (agoMs: number) => ({
      "berth-vol-a": {
        metadata: { name: "berth-vol-a", creationTimestamp: new Date(now.getTime() - agoMs).toISOString() },
        status: { phase: "Pending" },
      },
    });
    expect(planMirror({ mirror, now, claims: pending(1_000) }, opts).requeueAfterMs).toBe(200);
    expect(planMirror({ mirror, now, claims: pending(10_000) }, opts).requeueAfterMs).toBe(2_000);
  });

  it("removes an earlier version's policy before anything else it does for the pod", () => {
    const networkPolicy = { metadata: { name: "ses-abc", ownerReferences: ours } };
    const p = planMirror({ mirror: aMirror(), networkPolicy }, opts);
    expect(p.actions.map((a) => a.kind)).toEqual(["deleteNetworkPolicy", "createPod"]);
  });
});
