import { describe, expect, it } from "vitest";
import { broken, examples, invalidExamples } from "./examples.test-support.ts";
import { clusterResourceName, MINOR_UNITS_PER_CREDIT } from "./fields.ts";
import { allKinds, Session, SessionKind, SessionPhase, WalletKind } from "./kinds/index.ts";

describe("the resource schemas", () => {
  it.each(allKinds.map((k) => [k.kind, k] as const))("accept the example %s", (kind, k) => {
    const parsed = k.schema.parse(examples[kind as keyof typeof examples]());
    expect(parsed.apiVersion).toBe("berth.dev/v1alpha1");
  });

  it.each(invalidExamples)("refuse %s: %s", (kind, _what, breakIt) => {
    const k = allKinds.find((x) => x.kind === kind);
    expect(k?.schema.safeParse(broken(kind, breakIt)).success).toBe(false);
  });

  it("refuse an object of another kind", () => {
    expect(Session.safeParse({ ...examples.Session(), kind: "Wallet" }).success).toBe(false);
  });

  it("fill in a new session's defaults: desired Running, priority 0, no volumes", () => {
    expect(examples.Session().spec).toMatchObject({ desiredState: "Running", priority: 0, volumes: [] });
  });

  it("accept a session with a full status", () => {
    const s = examples.Session();
    s.status = {
      phase: "Running",
      observedGeneration: 1,
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "PodRunning",
          message: "",
          lastTransitionTime: "2026-01-01T00:00:00Z",
        },
      ],
      cluster: "clu_a1",
      node: "gpu-node-1",
      gpuModel: "NVIDIA-H100-80GB-HBM3",
      gpuDevices: ["GPU-0"],
      connect: { lab: "/proxy/ses-1/lab", terminal: "/proxy/ses-1/terminal", code: "/proxy/ses-1/code/" },
      startedAt: "2026-01-01T00:00:00Z",
    };
    expect(Session.safeParse(s).success).toBe(true);
  });

  it("refuse two conditions of the same type", () => {
    const c = {
      type: "Ready",
      status: "True",
      reason: "PodRunning",
      message: "",
      lastTransitionTime: "2026-01-01T00:00:00Z",
    };
    expect(Session.safeParse({ ...examples.Session(), status: { conditions: [c, c] } }).success).toBe(false);
  });

  it("keep metadata fields they do not model, so a read-modify-write loses nothing", () => {
    const s = Session.parse({
      ...examples.Session(),
      metadata: { name: "x", managedFields: [{ manager: "kubectl" }] },
    });
    expect(s.metadata.managedFields).toEqual([{ manager: "kubectl" }]);
  });

  it("list all twelve session phases", () => {
    expect(SessionPhase.options).toHaveLength(12);
  });

  it("build objects that throw on an invalid spec", () => {
    expect(() => WalletKind.build({ name: "w" }, { owner: { kind: "team" as "user", id: "x" } })).toThrow();
    expect(SessionKind.crdName).toBe("sessions.berth.dev");
  });

  it("name a Cluster resource from its id, since ids hold an underscore", () => {
    expect(clusterResourceName("clu_a1")).toBe("clu-a1");
  });

  it("count a credit as a million minor units", () => {
    expect(MINOR_UNITS_PER_CREDIT).toBe(1_000_000n);
  });
});
