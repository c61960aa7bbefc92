// The pod waits for its volumes' claims: made when absent (by a name from the volume id, so an operator
// restarted mid-create finds its own instead of making a second), bound before the pod, and a claim that
// never binds fails the session with its reason instead of waiting on.
import type { SessionMirror } from "@berth/crds";
import { examples } from "@berth/crds/testing";
import { describe, expect, it } from "vitest";
import { DATA_PATH_ANNOTATION } from "./manifests.ts";
import { CLAIM_BIND_TIMEOUT_MS, type ClaimView, planMirror } from "./plan.ts";

const opts = { namespace: "berth-sessions" };
const CLAIM = "berth-vol-aaaaaaaaaaaaaaaaaaaa";

function aMirror(): SessionMirror {
  const m = examples.SessionMirror();
  m.metadata = { name: "ses-abc", namespace: "berth-sessions", uid: "uid-1", generation: 1 };
  m.spec.volumes = [
    {
      claimName: CLAIM,
      volumeId: "vol_aaaaaaaaaaaaaaaaaaaa",
      storageClass: "berth-shared",
      sizeGb: 10,
      dataPath: "berth/volumes/vol-aaaaaaaaaaaaaaaaaaaa",
      mountPath: "/home/jovyan/work",
      readOnly: false,
    },
  ];
  return m;
}

const claim = (phase: string, createdAgoMs = 0, now = new Date("2026-11-26T06:00:00Z")): ClaimView => ({
  metadata: { name: CLAIM, creationTimestamp: new Date(now.getTime() - createdAgoMs).toISOString() },
  status: { phase },
});

describe("a mirror with a volume", () => {
  const now = new Date("2026-11-26T06:00:00Z");

  it("makes the claim on the pool's class, with the data path, and waits for it before the pod", () => {
    const plan = planMirror({ mirror: aMirror(), now, claims: {} }, opts);
    const create = plan.actions.find((a) => a.kind === "createClaim");
    expect(create).toMatchObject({
      manifest: {
        metadata: {
          name: CLAIM,
          namespace: "berth-sessions",
          annotations: { [DATA_PATH_ANNOTATION]: "berth/volumes/vol-aaaaaaaaaaaaaaaaaaaa" },
          labels: { "berth.dev/volume-id": "vol_aaaaaaaaaaaaaaaaaaaa" },
        },
        spec: { storageClassName: "berth-shared", resources: { requests: { storage: "10Gi" } } },
      },
    });
    // Not owned by the mirror: the claim outlives the session.
    expect(
      (create as { manifest: { metadata: Record<string, unknown> } }).manifest.metadata.ownerReferences,
    ).toBeUndefined();
    expect(plan.actions.some((a) => a.kind === "createPod")).toBe(false);
    expect(plan.report).toMatchObject({ phase: "Starting", reason: "WaitingForClaim" });
    expect(plan.requeueAfterMs).toBeGreaterThan(0);
  });

  it("makes no second claim while the first is pending, and says which it waits for", () => {
    const plan = planMirror({ mirror: aMirror(), now, claims: { [CLAIM]: claim("Pending", 1_000) } }, opts);
    expect(plan.actions.some((a) => a.kind === "createClaim" || a.kind === "createPod")).toBe(false);
    expect(plan.report.message).toContain(CLAIM);
  });

  it("creates the pod once the claim is bound", () => {
    const plan = planMirror({ mirror: aMirror(), now, claims: { [CLAIM]: claim("Bound", 1_000) } }, opts);
    expect(plan.actions.some((a) => a.kind === "createPod")).toBe(true);
    expect(plan.actions.some((a) => a.kind === "createClaim")).toBe(false);
  });

  it("fails the session with ClaimNotBound when the claim does not bind in time", () => {
    const plan = planMirror(
      { mirror: aMirror(), now, claims: { [CLAIM]: claim("Pending", CLAIM_BIND_TIMEOUT_MS + 1) } },
      opts,
    );
    expect(plan.report).toMatchObject({ phase: "Failed", reason: "ClaimNotBound" });
    expect(plan.report.message).toContain("berth-shared");
    const sooner = planMirror(
      { mirror: aMirror(), now, claims: { [CLAIM]: claim("Pending", 2_000) } },
      { ...opts, claimBindTimeoutMs: 1_000 },
    );
    expect(sooner.report.reason).toBe("ClaimNotBound");
  });
});
