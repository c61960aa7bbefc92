// Builders for inventory tests: Nodes and Pods shaped as the apiserver sends them.
import type { NodeLike, PodLike } from "./compute.ts";

export interface NodeBuilder {
  build(): NodeLike;
  withGpus(count: number, model?: string): NodeBuilder;
  withAllocatable(count: number): NodeBuilder;
  withLabel(key: string, value: string): NodeBuilder;
  withAnnotation(key: string, value: string): NodeBuilder;
  cordoned(): NodeBuilder;
  notReady(): NodeBuilder;
  heartbeatAt(time: string): NodeBuilder;
}

export function aNode(name: string): NodeBuilder {
  const node = {
    metadata: {
      name,
      labels: { "kubernetes.io/hostname": name } as Record<string, string>,
      annotations: {} as Record<string, string>,
    },
    spec: {} as { unschedulable?: boolean },
    status: {
      capacity: { cpu: "96", memory: "1Ti", pods: "110" } as Record<string, string>,
      allocatable: { cpu: "96", memory: "1Ti", pods: "110" } as Record<string, string>,
      conditions: [
        { type: "MemoryPressure", status: "False", lastHeartbeatTime: "2026-11-22T06:00:00Z" },
        { type: "Ready", status: "True", lastHeartbeatTime: "2026-11-22T06:00:00Z", reason: "KubeletReady" },
      ] as { type: string; status: string; lastHeartbeatTime?: string; reason?: string }[],
    },
  };
  const b: NodeBuilder = {
    build: () => structuredClone(node),
    withGpus(count, model = "NVIDIA-H100-80GB-HBM3") {
      node.status.capacity["nvidia.com/gpu"] = String(count);
      node.status.allocatable["nvidia.com/gpu"] = String(count);
      node.metadata.labels["nvidia.com/gpu.product"] = model;
      node.metadata.labels["nvidia.com/gpu.count"] = String(count);
      return b;
    },
    withAllocatable(count) {
      node.status.allocatable["nvidia.com/gpu"] = String(count);
      return b;
    },
    withLabel(key, value) {
      node.metadata.labels[key] = value;
      return b;
    },
    withAnnotation(key, value) {
      node.metadata.annotations[key] = value;
      return b;
    },
    cordoned() {
      node.spec.unschedulable = true;
      return b;
    },
    notReady() {
      for (const c of node.status.conditions) if (c.type === "Ready") c.status = "False";
      return b;
    },
    heartbeatAt(time) {
      for (const c of node.status.conditions) c.lastHeartbeatTime = time;
      return b;
    },
  };
  return b;
}

export function aPod(
  name: string,
  opts: {
    node?: string;
    gpus?: number;
    phase?: string;
    initGpus?: number;
    sidecarGpus?: number;
    namespace?: string;
  } = {},
): PodLike {
  const limits = (n: number | undefined) =>
    n === undefined ? {} : { limits: { "nvidia.com/gpu": String(n), cpu: "1" } };
  const initContainers = [];
  if (opts.initGpus !== undefined) initContainers.push({ name: "init", resources: limits(opts.initGpus) });
  if (opts.sidecarGpus !== undefined)
    initContainers.push({ name: "sidecar", restartPolicy: "Always", resources: limits(opts.sidecarGpus) });
  return {
    metadata: { name, namespace: opts.namespace ?? "sessions" },
    spec: {
      ...(opts.node === undefined ? {} : { nodeName: opts.node }),
      containers: [{ name: "main", resources: limits(opts.gpus) } as never],
      ...(initContainers.length ? { initContainers: initContainers as never } : {}),
    },
    status: { phase: opts.phase ?? "Running" },
  };
}
