// One valid object of every kind, for tests here and elsewhere (`@berth/crds/testing`). Each call
// returns a fresh object, so a test may change it freely.
import { clusterResourceName } from "./fields.ts";
import type { KindDefinition } from "./kind.ts";
import {
  type Cluster,
  ClusterKind,
  type Image,
  type ImageBuild,
  ImageBuildKind,
  ImageKind,
  type Offering,
  OfferingKind,
  type Pool,
  PoolKind,
  type ResourcePolicy,
  ResourcePolicyKind,
  type ResourcePreset,
  ResourcePresetKind,
  type Session,
  SessionKind,
  type SessionMirror,
  SessionMirrorKind,
  type Volume,
  VolumeKind,
  type Wallet,
  WalletKind,
} from "./kinds/index.ts";

const ns = "org-acme";

export const examples = {
  Session: (): Session =>
    SessionKind.build(
      { name: "ses-1", namespace: ns },
      { owner: "usr_1", organization: "org_acme", offering: "h100", preset: "gpu-small", image: "jupyterlab" },
    ),
  Wallet: (): Wallet =>
    WalletKind.build({ name: "user-usr-1", namespace: ns }, { owner: { kind: "user", id: "usr_1" } }),
  Volume: (): Volume =>
    VolumeKind.build(
      { name: "home-usr-1", namespace: ns },
      { owner: { kind: "user", id: "usr_1" }, organization: "org_acme", sizeGb: 50 },
    ),
  Pool: (): Pool =>
    PoolKind.build({ name: "shared" }, { cluster: "clu_a1", storageClass: "berth-shared", manualCapacityGb: 2000 }),
  Cluster: (): Cluster =>
    ClusterKind.build(
      { name: clusterResourceName("clu_a1") },
      {
        id: "clu_a1",
        displayName: "GPU cluster A",
        sessionDomain: "a.sessions.berth.local",
        credentialSecretRef: { namespace: "berth-system", name: "cluster-clu-a1" },
      },
    ),
  Offering: (): Offering =>
    OfferingKind.build(
      { name: "h100" },
      { displayName: "H100 80 GB", gpuModel: "NVIDIA-H100-80GB-HBM3", tier: "premium", hourlyCreditRate: "4000000" },
    ),
  Image: (): Image =>
    ImageKind.build(
      { name: "jupyterlab" },
      { displayName: "JupyterLab", image: "quay.io/jupyter/pytorch-notebook:cuda12-latest", kind: "jupyterlab" },
    ),
  ResourcePreset: (): ResourcePreset =>
    ResourcePresetKind.build(
      { name: "gpu-small" },
      { displayName: "Small GPU", kind: "gpu", cpu: "4", memory: "16Gi", gpuCount: 1 },
    ),
  ResourcePolicy: (): ResourcePolicy =>
    ResourcePolicyKind.build(
      { name: "global" },
      { scope: { kind: "global" }, limits: { maxGpusPerUser: 4, maxConcurrentSessionsPerUser: 3 } },
    ),
  SessionMirror: (): SessionMirror =>
    SessionMirrorKind.build(
      { name: "ses-1", namespace: ns },
      {
        sessionId: "ses_1",
        source: { namespace: ns, name: "ses-1" },
        cluster: "clu_a1",
        owner: "usr_1",
        organization: "org_acme",
        image: "quay.io/jupyter/pytorch-notebook:cuda12-latest",
        imageKind: "jupyterlab",
        resources: { cpu: "4", memory: "16Gi", gpuCount: 1, gpuModel: "NVIDIA-H100-80GB-HBM3" },
        revision: 1,
      },
    ),
  ImageBuild: (): ImageBuild =>
    ImageBuildKind.build(
      { name: "build-1", namespace: ns },
      {
        buildId: "bld-1",
        cluster: "clu_a1",
        dockerfile: "FROM scratch\n",
        destination: "registry.example/org_acme/usr_1/lab:1",
        insecureRegistry: false,
        builderImage: "moby/buildkit:rootless",
        timeoutSeconds: 3600,
        egressCidrs: [],
      },
    ),
} satisfies Record<string, () => { kind: string }>;

export function exampleOf(k: KindDefinition): { kind: string; metadata: { name?: string }; spec: unknown } {
  return examples[k.kind as keyof typeof examples]();
}

// biome-ignore lint/suspicious/noExplicitAny: tests reach into objects to break them on purpose
type Any = any;

/**
 * Ways to break an object of each kind; zod and the apiserver must both refuse every one. Cases that set
 * `status` break the status (written through the status subresource), the others the spec.
 */
export const invalidExamples: [kind: keyof typeof examples, what: string, breakIt: (o: Any) => void][] = [
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
  [
    "Offering",
    "a fraction not offered (1/3 of a card)",
    (o) => Object.assign(o.spec, { slicesPerCard: 3, gpuMemoryMib: 81559 }),
  ],
  [
    "Offering",
    "a fraction of several cards",
    (o) => Object.assign(o.spec, { slicesPerCard: 4, gpuMemoryMib: 81559, gpuCount: 2 }),
  ],
  ["Offering", "a fraction without the model's memory", (o) => Object.assign(o.spec, { slicesPerCard: 2 })],
  ["Offering", "a slice under 1 GiB", (o) => Object.assign(o.spec, { slicesPerCard: 8, gpuMemoryMib: 4096 })],
  ["Image", "a private image without an owner", (o) => (o.spec.visibility = "private")],
  ["Image", "an image of an unknown kind", (o) => (o.spec.kind = "vscode")],
  ["ResourcePreset", "a GPU preset with no GPU", (o) => (o.spec.gpuCount = 0)],
  ["ResourcePreset", "a preset whose memory is not a quantity", (o) => (o.spec.memory = "16 gigs")],
  ["ResourcePolicy", "a global policy that names an id", (o) => (o.spec.scope.id = "org_acme")],
  ["ResourcePolicy", "a project policy without an id", (o) => (o.spec.scope = { kind: "project" })],
  ["ResourcePolicy", "a policy with a negative limit", (o) => (o.spec.limits.maxGpusPerUser = -1)],
  ["SessionMirror", "a mirror asking for no GPU", (o) => (o.spec.resources.gpuCount = 0)],
  ["SessionMirror", "a mirror whose revision is zero", (o) => (o.spec.revision = 0)],
  ["ImageBuild", "a build without a destination", (o) => delete o.spec.destination],
  ["ImageBuild", "a build whose deadline is under a minute", (o) => (o.spec.timeoutSeconds = 5)],
];

export function broken(kind: keyof typeof examples, breakIt: (o: Any) => void): Any {
  const o: Any = examples[kind]();
  breakIt(o);
  return o;
}
