// What a GPU cluster holds besides its control plane: kwok-managed nodes with `nvidia.com/gpu` capacity,
// and the two things Berth's registration probes for (the `nvidia` RuntimeClass, the device plugin).
// With `sharing: "hami"` a node looks like a node of a HAMi cluster: what HAMi's device plugin publishes
// (vGPU count, the register annotation with each card's UUID, memory and cores) plus, so that the bed's
// plain kube-scheduler enforces per-node sums of what HAMi's scheduler extender would, `nvidia.com/gpumem`
// and `nvidia.com/gpucores` as extended resources. Card UUIDs are stable: derived from the node's name.
import { createHash } from "node:crypto";
import { formatHamiRegister, HAMI, type HamiCard, MIG_RESOURCE_PREFIX } from "@berth/crds";
import type { KubeHttp } from "./kube.ts";
import type { GpuNodeDescription } from "./types.ts";

export const GPU_RESOURCE = "nvidia.com/gpu";

/** GPU memory per card as the cards report it (nvidia-smi, HAMi's register), by `nvidia.com/gpu.product`. */
export const CARD_MEMORY_MIB: Record<string, number> = {
  "NVIDIA-H100-80GB-HBM3": 81559,
  "NVIDIA-A100-SXM4-80GB": 81920,
  "NVIDIA-A100-SXM4-40GB": 40960,
  "NVIDIA-L4": 23034,
};

/** One card of a bed node: what HAMi registers for it. */
export interface BedGpuCard {
  index: number;
  uuid: string;
  model: string;
  memoryMib: number;
  /** Percent; 100 = the whole card. */
  cores: number;
  /** vGPUs it splits into (HAMi's deviceSplitCount). */
  split: number;
}

/** A stable card UUID in NVIDIA's shape (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx), from node name and index. */
export function cardUuid(nodeName: string, index: number): string {
  const h = createHash("sha256").update(`${nodeName}/${index}`).digest("hex");
  return `GPU-${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/**
 * The cards of a bed GPU node, in index order, with the UUIDs its register (and, on every node, the
 * `berth.dev/gpu-uuids` annotation) carries: the one list other tests and stand-ins (metrics exporters)
 * use to name a node's cards.
 */
export function gpuCardsOf(node: GpuNodeDescription): BedGpuCard[] {
  const memoryMib = node.gpuMemoryMib ?? CARD_MEMORY_MIB[node.gpuModel] ?? 81920;
  return Array.from({ length: node.gpuCount }, (_, index) => ({
    index,
    uuid: cardUuid(node.name, index),
    model: node.gpuModel,
    memoryMib,
    cores: 100,
    split: node.vgpuSplit ?? 10,
  }));
}

function hamiCards(cards: readonly BedGpuCard[]): HamiCard[] {
  return cards.map((c) => ({
    uuid: c.uuid,
    index: c.index,
    split: c.split,
    memoryMib: c.memoryMib,
    cores: c.cores,
    type: c.model,
    numa: 0,
    healthy: true,
    mode: "hami-core",
  }));
}

/** A Node as kwok expects it: the annotation kwok manages, status sent on create (kept then). */
export function gpuNodeManifest(node: GpuNodeDescription): object {
  const cards = gpuCardsOf(node);
  const hami = node.sharing === "hami";
  const resources = {
    cpu: node.cpu ?? "96",
    memory: node.memory ?? "1Ti",
    pods: String(node.pods ?? 110),
    "ephemeral-storage": "1Ti",
    [GPU_RESOURCE]: String(hami ? cards.reduce((n, c) => n + c.split, 0) : node.mig ? 0 : node.gpuCount),
    ...Object.fromEntries(
      Object.entries(node.mig ?? {}).map(([profile, n]) => [
        `${MIG_RESOURCE_PREFIX}${profile}`,
        String(n * node.gpuCount),
      ]),
    ),
    ...(hami
      ? {
          [HAMI.memoryResource]: String(cards.reduce((n, c) => n + c.memoryMib, 0)),
          [HAMI.coresResource]: String(cards.reduce((n, c) => n + c.cores, 0)),
        }
      : {}),
  };
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: node.name,
      annotations: {
        "kwok.x-k8s.io/node": "fake",
        "node.alpha.kubernetes.io/ttl": "0",
        "berth.dev/gpu-uuids": cards.map((c) => c.uuid).join(","),
        ...(hami
          ? {
              [HAMI.registerAnnotation]: formatHamiRegister(hamiCards(cards)),
              [HAMI.handshakeAnnotation]: `Reported ${new Date().toISOString()}`,
            }
          : {}),
      },
      labels: {
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        type: "kwok",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": node.gpuModel,
        "nvidia.com/gpu.count": String(node.gpuCount),
        "nvidia.com/gpu.memory": String(cards[0]?.memoryMib ?? 0),
        ...(hami ? { gpu: "on" } : {}),
        ...(node.mig ? { "nvidia.com/mig.strategy": "mixed" } : {}),
        ...node.labels,
      },
    },
    spec: { providerID: `kwok://${node.name}` },
    status: { capacity: resources, allocatable: resources, phase: "Pending" },
  };
}

export async function createGpuNode(kube: KubeHttp, node: GpuNodeDescription): Promise<void> {
  await kube.json("POST", "/api/v1/nodes", gpuNodeManifest(node));
}

/** The stub GPU runtime class registration looks for (also applied by the kind provider). */
export const runtimeClassManifest = () => ({
  apiVersion: "node.k8s.io/v1",
  kind: "RuntimeClass",
  metadata: { name: "nvidia" },
  handler: "nvidia",
});

export async function createRuntimeClass(kube: KubeHttp): Promise<void> {
  await kube.ensure("/apis/node.k8s.io/v1/runtimeclasses", runtimeClassManifest());
}

/** HAMi's device plugin DaemonSet, as its Helm chart names it (on nodes labelled gpu=on). */
export async function createHamiDevicePlugin(kube: KubeHttp): Promise<void> {
  await kube.ensure("/apis/apps/v1/namespaces/kube-system/daemonsets", hamiDevicePluginManifest());
}

export function hamiDevicePluginManifest(): object {
  const labels = { "app.kubernetes.io/component": "hami-device-plugin" };
  return {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name: HAMI.devicePluginDaemonSet, namespace: "kube-system", labels },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          nodeSelector: { gpu: "on" },
          tolerations: [{ key: GPU_RESOURCE, operator: "Exists", effect: "NoSchedule" }],
          priorityClassName: "system-node-critical",
          containers: [
            {
              name: "device-plugin",
              image: "projecthami/hami:v2.6.0",
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
            },
          ],
        },
      },
    },
  };
}

/** The NVIDIA device plugin's DaemonSet, as its Helm chart names it; kwok plays its pods like any other. */
export async function createDevicePlugin(kube: KubeHttp): Promise<void> {
  await kube.ensure("/apis/apps/v1/namespaces/kube-system/daemonsets", devicePluginManifest());
}

export function devicePluginManifest(): object {
  const labels = { "app.kubernetes.io/name": "nvidia-device-plugin" };
  return {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name: "nvidia-device-plugin-daemonset", namespace: "kube-system", labels },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          nodeSelector: { "nvidia.com/gpu.present": "true" },
          tolerations: [{ key: GPU_RESOURCE, operator: "Exists", effect: "NoSchedule" }],
          priorityClassName: "system-node-critical",
          containers: [
            {
              name: "nvidia-device-plugin-ctr",
              image: "nvcr.io/nvidia/k8s-device-plugin:v0.17.1",
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
            },
          ],
        },
      },
    },
  };
}

interface NodeStatusView {
  status?: { conditions?: { type: string; status: string }[] };
  spec?: { taints?: { key: string }[] };
}

/** Ready, and the not-ready taint lifted by kube-controller-manager (only then does the scheduler use it). */
export function nodeIsReady(node: NodeStatusView): boolean {
  const ready = node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
  const tainted = node.spec?.taints?.some((t) => t.key.startsWith("node.kubernetes.io/not-ready")) ?? false;
  return ready && !tainted;
}
