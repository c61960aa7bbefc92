// The default catalog, created at start-up in the management cluster as berth.dev/v1alpha1 custom
// resources: GPU offerings, base images, compute and GPU presets, the global resource policy and the
// system wallet (namespace berth-system).
//
// Create-if-absent, never update: an object that exists (409) is left exactly as it is, so an
// administrator's edit — a changed rate, a disabled offering, another image tag — survives every restart.
// A deleted default comes back at the next start; disable it (offerings: enabled=false) to retire it.

import { type KubeApi, KubeError } from "@berth/controllers/kube";
import {
  ImageKind,
  type KindDefinition,
  LABELS,
  MINOR_UNITS_PER_CREDIT,
  migProfilesOf,
  migRate,
  migShare,
  OfferingKind,
  ResourcePolicyKind,
  ResourcePresetKind,
  resourcePath,
  SLICES_PER_CARD,
  type SlicesPerCard,
  WalletKind,
} from "@berth/crds";
import type { Logger } from "pino";

export const SYSTEM_NAMESPACE = "berth-system";
const CATALOG_LABELS = { [LABELS.partOf]: "berth", [LABELS.catalog]: "default" };

/** Whole and fractional credits per hour -> minor units (integer string), without a float. */
function creditsPerHour(credits: string): string {
  const [whole = "", frac = ""] = credits.split(".");
  const digits = MINOR_UNITS_PER_CREDIT.toString().length - 1;
  return (BigInt(whole) * MINOR_UNITS_PER_CREDIT + BigInt(frac.padEnd(digits, "0").slice(0, digits) || "0")).toString();
}

export interface CatalogEntry {
  kind: KindDefinition;
  /** A full object of that kind, parsed by its zod schema. */
  object: {
    apiVersion: string;
    kind: string;
    metadata: { name?: string; namespace?: string; labels?: Record<string, string> };
    spec: unknown;
  };
}

const meta = (name: string, namespace?: string) => ({
  name,
  ...(namespace ? { namespace } : {}),
  labels: { ...CATALOG_LABELS },
});

/** GPU memory per card as the cards report it (nvidia-smi, HAMi's register): slices derive from it. */
const H100_MIB = 81559;
const A100_MIB = 81920;

/**
 * Fractional offerings of one model (docs/dev/gpu-sharing.md): a slice costs a little more than its share
 * of the whole card's rate (eight 1/8 sessions, or 32 1/32, pay 4.8 credits an hour for an H100 that costs 4 whole),
 * for the packing headroom a shared card keeps.
 */
function slices(
  base: string,
  display: string,
  gpuModel: string,
  memoryMib: number,
  rates: Record<SlicesPerCard, string>,
) {
  return SLICES_PER_CARD.map((n) =>
    OfferingKind.build(meta(`${base}-1-${n}`), {
      displayName: `${display} 1/${n} (${Math.floor(memoryMib / n / 1024)} GB)`,
      gpuModel,
      tier: "shared",
      gpuCount: 1,
      gpuMemoryMib: memoryMib,
      slicesPerCard: n,
      hourlyCreditRate: creditsPerHour(rates[n]),
      description: `1/${n} of one card: ${Math.floor(memoryMib / n)} MiB of GPU memory guaranteed and ${Math.floor(100 / n)} % of its cores, on a cluster with a GPU sharing layer.`,
    }),
  );
}

/**
 * MIG offerings of one model (docs/dev/gpu-sharing.md): one per profile smaller than the card, at exactly
 * the profile's share of the whole card's rate (the larger of compute of 7 and memory of 8), rounded down
 * to the minor unit. No headroom premium as slices pay: a MIG instance is isolated in hardware and its
 * card's partition is the administrator's, not Berth's packing.
 */
function migInstances(base: string, display: string, gpuModel: string, wholeRate: string) {
  return (migProfilesOf(gpuModel) ?? [])
    .filter((p) => p.computeSlices < 7)
    .map((p) => {
      const share = migShare(p);
      return OfferingKind.build(meta(`${base}-mig-${p.name.replace(".", "-")}`), {
        displayName: `${display} MIG ${p.name}`,
        gpuModel,
        tier: "mig",
        gpuCount: 1,
        migProfile: p.name,
        hourlyCreditRate: String(migRate(Number(creditsPerHour(wholeRate)), share)),
        description: `One MIG instance ${p.name}: ${p.computeSlices} of 7 compute slices, isolated in hardware; billed at ${share.num}/${share.den} of the card, on nodes an administrator marked with a MIG layout.`,
      });
    });
}

/** The default catalog. Rates are credits per hour in minor units (1 credit = 1,000,000). */
export function defaultCatalog(): CatalogEntry[] {
  const offerings = [
    OfferingKind.build(meta("h100"), {
      displayName: "NVIDIA H100 80 GB",
      gpuModel: "NVIDIA-H100-80GB-HBM3",
      tier: "premium",
      gpuCount: 1,
      gpuMemoryMib: H100_MIB,
      hourlyCreditRate: creditsPerHour("4"),
      description: "Hopper, 80 GB HBM3: large-model training and fine-tuning.",
    }),
    ...slices("h100", "NVIDIA H100", "NVIDIA-H100-80GB-HBM3", H100_MIB, {
      2: "2.2",
      4: "1.15",
      8: "0.6",
      16: "0.3",
      32: "0.15",
    }),
    ...migInstances("h100", "NVIDIA H100", "NVIDIA-H100-80GB-HBM3", "4"),
    OfferingKind.build(meta("a100"), {
      displayName: "NVIDIA A100 80 GB",
      gpuModel: "NVIDIA-A100-SXM4-80GB",
      tier: "standard",
      gpuCount: 1,
      gpuMemoryMib: A100_MIB,
      hourlyCreditRate: creditsPerHour("2.5"),
      description: "Ampere, 80 GB HBM2e: training and large-batch inference.",
    }),
    ...slices("a100", "NVIDIA A100", "NVIDIA-A100-SXM4-80GB", A100_MIB, {
      2: "1.4",
      4: "0.75",
      8: "0.4",
      16: "0.2",
      32: "0.1",
    }),
    ...migInstances("a100", "NVIDIA A100", "NVIDIA-A100-SXM4-80GB", "2.5"),
    OfferingKind.build(meta("l4"), {
      displayName: "NVIDIA L4 24 GB",
      gpuModel: "NVIDIA-L4",
      tier: "economy",
      gpuCount: 1,
      gpuMemoryMib: 23034,
      hourlyCreditRate: creditsPerHour("0.8"),
      description: "Ada Lovelace, 24 GB: inference, notebooks and small experiments.",
    }),
  ];
  const images = [
    ImageKind.build(meta("jupyterlab"), {
      displayName: "JupyterLab (PyTorch, CUDA 12)",
      image: "quay.io/jupyter/pytorch-notebook:cuda12-latest",
      kind: "jupyterlab",
      visibility: "public",
      description: "JupyterLab with PyTorch and CUDA 12.",
    }),
    ImageKind.build(meta("code-server"), {
      displayName: "Code editor (code-server)",
      image: "docker.io/codercom/code-server:latest",
      kind: "code-server",
      visibility: "public",
      description: "VS Code in the browser.",
    }),
    ImageKind.build(meta("terminal"), {
      displayName: "Web terminal (ttyd)",
      image: "docker.io/tsl0922/ttyd:latest",
      kind: "terminal",
      visibility: "public",
      description: "A shell in the browser.",
    }),
  ];
  const presets = [
    ResourcePresetKind.build(meta("cpu-small"), {
      displayName: "Small (2 CPU, 8 GiB)",
      kind: "compute",
      cpu: "2",
      memory: "8Gi",
      gpuCount: 0,
    }),
    ResourcePresetKind.build(meta("cpu-medium"), {
      displayName: "Medium (4 CPU, 16 GiB)",
      kind: "compute",
      cpu: "4",
      memory: "16Gi",
      gpuCount: 0,
    }),
    ResourcePresetKind.build(meta("cpu-large"), {
      displayName: "Large (8 CPU, 32 GiB)",
      kind: "compute",
      cpu: "8",
      memory: "32Gi",
      gpuCount: 0,
    }),
    ResourcePresetKind.build(meta("gpu-small"), {
      displayName: "1 GPU (8 CPU, 64 GiB)",
      kind: "gpu",
      cpu: "8",
      memory: "64Gi",
      gpuCount: 1,
    }),
    ResourcePresetKind.build(meta("gpu-medium"), {
      displayName: "2 GPUs (16 CPU, 128 GiB)",
      kind: "gpu",
      cpu: "16",
      memory: "128Gi",
      gpuCount: 2,
    }),
    ResourcePresetKind.build(meta("gpu-large"), {
      displayName: "4 GPUs (32 CPU, 256 GiB)",
      kind: "gpu",
      cpu: "32",
      memory: "256Gi",
      gpuCount: 4,
    }),
  ];
  const policy = ResourcePolicyKind.build(meta("global"), {
    scope: { kind: "global" },
    limits: { maxGpusPerUser: 4, maxConcurrentSessionsPerUser: 4, maxVolumeGbPerUser: 500, maxPriority: 0 },
  });
  const wallet = WalletKind.build(meta("system", SYSTEM_NAMESPACE), {
    owner: { kind: "system", id: "system" },
    displayName: "System wallet",
  });
  return [
    ...offerings.map((object) => ({ kind: OfferingKind as unknown as KindDefinition, object })),
    ...images.map((object) => ({ kind: ImageKind as unknown as KindDefinition, object })),
    ...presets.map((object) => ({ kind: ResourcePresetKind as unknown as KindDefinition, object })),
    { kind: ResourcePolicyKind as unknown as KindDefinition, object: policy },
    { kind: WalletKind as unknown as KindDefinition, object: wallet },
  ];
}

export interface CatalogInstallResult {
  /** "Kind/name" (namespaced: "Kind/namespace/name") of what this start created. */
  created: string[];
  /** What was there already and was left untouched. */
  existing: string[];
}

export interface InstallCatalogOptions {
  log?: Logger;
  /** How long to wait for the CRDs to be served (a fresh CRD answers 404 for a moment). Default 60 s. */
  waitForCrdsMs?: number;
  /** Override the catalog (tests). */
  entries?: CatalogEntry[];
}

const statusOf = (e: unknown) => (e instanceof KubeError ? e.status : undefined);

/** Retries while the apiserver does not serve the kind yet (404), is briefly unavailable, or unreachable. */
async function withCrdWait<T>(call: () => Promise<T>, deadline: number): Promise<T> {
  for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
    try {
      return await call();
    } catch (e) {
      const code = statusOf(e);
      const retryable = code === undefined || code === 404 || code === 429 || code === 503;
      if (!retryable || Date.now() + delay > deadline) throw e;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/** Through the management cluster's one client (Deps.kube); the caller owns it. */
export async function installDefaultCatalog(
  kube: KubeApi,
  opts: InstallCatalogOptions = {},
): Promise<CatalogInstallResult> {
  const deadline = Date.now() + (opts.waitForCrdsMs ?? 60_000);
  const entries = opts.entries ?? defaultCatalog();
  const result: CatalogInstallResult = { created: [], existing: [] };

  if (entries.some((e) => e.object.metadata.namespace === SYSTEM_NAMESPACE)) {
    try {
      await withCrdWait(
        () =>
          kube.json("POST", "/api/v1/namespaces", {
            body: {
              apiVersion: "v1",
              kind: "Namespace",
              metadata: { name: SYSTEM_NAMESPACE, labels: { "app.kubernetes.io/part-of": "berth" } },
            },
          }),
        deadline,
      );
    } catch (e) {
      if (statusOf(e) !== 409) throw e;
    }
  }

  for (const { kind, object } of entries) {
    const { name, namespace } = object.metadata;
    if (name === undefined) throw new Error(`a default ${kind.kind} without a name`);
    const id = namespace ? `${kind.kind}/${namespace}/${name}` : `${kind.kind}/${name}`;
    const path = resourcePath(kind, namespace ? { namespace } : {});
    try {
      await withCrdWait(() => kube.json("POST", path, { body: object }), deadline);
      result.created.push(id);
    } catch (e) {
      if (statusOf(e) !== 409) {
        throw new Error(
          `default catalog: creating ${id} failed (${statusOf(e) ?? "no answer"}): ${e instanceof Error ? e.message : String(e)}`,
          { cause: e },
        );
      }
      result.existing.push(id);
    }
  }
  opts.log?.info({ created: result.created, existing: result.existing.length }, "default catalog ensured");
  return result;
}
