import { describe, expect, it } from "vitest";
import { clusterResourceName, MINOR_UNITS_PER_CREDIT } from "./fields.ts";
import { allKinds, Session, SessionKind, SessionPhase, WalletKind } from "./kinds/index.ts";
import { examples } from "./testing.ts";

// biome-ignore lint/suspicious/noExplicitAny: tests reach into objects to break them on purpose
type Any = any;

/** Ways to break an object of each kind, each of which both zod and the apiserver must refuse. */
export const invalid: [kind: keyof typeof examples, what: string, breakIt: (o: Any) => void][] = [
  ["Session", "a session without an owner", (o) => delete o.spec.owner],
  [
    "Session",
    "a session whose desired state is not Running, Paused or Terminated",
    (o) => (o.spec.desiredState = "Sleeping"),
  ],
  ["Session", "a session whose offering is not an object name", (o) => (o.spec.offering = "H100 80GB")],
  ["Session", "a session pinned to something that is not a cluster id", (o) => (o.spec.clusterPin = "cluster-a")],
  ["Session", "a session with a fractional priority", (o) => (o.spec.priority = 1.5)],
  ["Session", "a session in an unknown phase", (o) => (o.status = { phase: "Sleeping" })],
  ["Wallet", "a wallet owned by an unknown kind of owner", (o) => (o.spec.owner.kind = "team")],
  ["Wallet", "a wallet whose balance is a float", (o) => (o.status = { balance: "12.5" })],
  ["Volume", "a volume of zero gigabytes", (o) => (o.spec.sizeGb = 0)],
  [
    "Volume",
    "a volume shared with a bad access mode",
    (o) => (o.spec.shares = [{ kind: "user", id: "u2", access: "Admin" }]),
  ],
  ["Pool", "a pool shared with selected clusters but naming none", (o) => (o.spec.sharing = "selected")],
  [
    "Pool",
    "a pool capacity reading from an unknown source",
    (o) => (o.status = { capacity: { totalGb: 1, source: "guess" } }),
  ],
  ["Cluster", "a cluster whose id lacks the clu_ prefix", (o) => (o.spec.id = "a1")],
  ["Cluster", "a cluster whose session domain is not a hostname", (o) => (o.spec.sessionDomain = "https://a.example")],
  ["Offering", "an offering whose hourly rate is a float", (o) => (o.spec.hourlyCreditRate = "1.5")],
  ["Offering", "an offering with no GPU", (o) => (o.spec.gpuCount = 0)],
  ["Image", "a private image without an owner", (o) => (o.spec.visibility = "private")],
  ["Image", "an image of an unknown kind", (o) => (o.spec.kind = "vscode")],
  ["ResourcePreset", "a GPU preset with no GPU", (o) => (o.spec.gpuCount = 0)],
  ["ResourcePreset", "a preset whose memory is not a quantity", (o) => (o.spec.memory = "16 gigs")],
  ["ResourcePolicy", "a global policy that names an id", (o) => (o.spec.scope.id = "org_acme")],
  ["ResourcePolicy", "a project policy without an id", (o) => (o.spec.scope = { kind: "project" })],
  ["ResourcePolicy", "a policy with a negative limit", (o) => (o.spec.limits.maxGpusPerUser = -1)],
];

export function broken(kind: keyof typeof examples, breakIt: (o: Any) => void): Any {
  const o: Any = examples[kind]();
  breakIt(o);
  return o;
}

describe("the resource schemas", () => {
  it.each(allKinds.map((k) => [k.kind, k] as const))("accept the example %s", (kind, k) => {
    const parsed = k.schema.parse(examples[kind as keyof typeof examples]());
    expect(parsed.apiVersion).toBe("berth.dev/v1alpha1");
  });

  it.each(invalid)("refuse %s: %s", (kind, _what, breakIt) => {
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
    expect(() => WalletKind.build({ name: "w" }, { owner: { kind: "team" as Any, id: "x" } })).toThrow();
    expect(SessionKind.crdName).toBe("sessions.berth.dev");
  });

  it("name a Cluster resource from its id, since ids hold an underscore", () => {
    expect(clusterResourceName("clu_a1")).toBe("clu-a1");
  });

  it("count a credit as a million minor units", () => {
    expect(MINOR_UNITS_PER_CREDIT).toBe(1_000_000n);
  });
});
