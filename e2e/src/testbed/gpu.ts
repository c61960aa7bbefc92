// What a GPU cluster holds besides its control plane: kwok-managed nodes with `nvidia.com/gpu` capacity,
// and the two things Berth's registration probes for (the `nvidia` RuntimeClass, the device plugin).
import type { KubeHttp } from "./kube.ts";
import type { GpuNodeDescription } from "./types.ts";

export const GPU_RESOURCE = "nvidia.com/gpu";

/** A Node as kwok expects it: the annotation kwok manages, status sent on create (kept then). */
export function gpuNodeManifest(node: GpuNodeDescription): object {
  const resources = {
    cpu: node.cpu ?? "96",
    memory: node.memory ?? "1Ti",
    pods: String(node.pods ?? 110),
    "ephemeral-storage": "1Ti",
    [GPU_RESOURCE]: String(node.gpuCount),
  };
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: node.name,
      annotations: { "kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0" },
      labels: {
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        type: "kwok",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": node.gpuModel,
        "nvidia.com/gpu.count": String(node.gpuCount),
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

export async function createRuntimeClass(kube: KubeHttp): Promise<void> {
  await kube.ensure("/apis/node.k8s.io/v1/runtimeclasses", {
    apiVersion: "node.k8s.io/v1",
    kind: "RuntimeClass",
    metadata: { name: "nvidia" },
    handler: "nvidia",
  });
}

/** The NVIDIA device plugin's DaemonSet, as its Helm chart names it; kwok plays its pods like any other. */
export async function createDevicePlugin(kube: KubeHttp): Promise<void> {
  const labels = { "app.kubernetes.io/name": "nvidia-device-plugin" };
  await kube.ensure("/apis/apps/v1/namespaces/kube-system/daemonsets", {
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
  });
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
