// One valid object of every kind, for tests here and elsewhere (`@berth/crds/testing`). Each call
// returns a fresh object, so a test may change it freely.
import { clusterResourceName } from "./fields.ts";
import type { KindDefinition } from "./kind.ts";
import {
  type Cluster,
  ClusterKind,
  type Image,
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
} satisfies Record<string, () => { kind: string }>;

export function exampleOf(k: KindDefinition): { kind: string; metadata: { name?: string }; spec: unknown } {
  return examples[k.kind as keyof typeof examples]();
}
