// What the inventory watches keep in memory: each object projected to the fields computeInventory reads.
// Two reasons: a busy cluster's pods would cost hundreds of MB as full objects, and comparing projections
// is how heartbeat churn (kwok and kubelets rewrite node status every few seconds) is told apart from a
// change that matters — an update whose projection is unchanged wakes nothing.
import { GPU_RESOURCE, GPU_UUIDS_ANNOTATION, HAMI, MIG_RESOURCE_PREFIX, migResourcesOf } from "@berth/crds";
import { isGpuNode, isTerminal, type NodeLike, type PodLike, podGpus, podMig } from "./compute.ts";

/** The node as inventory sees it, or undefined for a node without GPUs (not kept). */
export function slimNode(node: NodeLike): NodeLike | undefined {
  if (!isGpuNode(node)) return undefined;
  const annotations: Record<string, string> = {};
  const uuids = node.metadata?.annotations?.[GPU_UUIDS_ANNOTATION];
  if (uuids !== undefined) annotations[GPU_UUIDS_ANNOTATION] = uuids;
  // The sharing layer's register: per-card UUID, memory, cores and health (not its handshake, a timestamp).
  const register = node.metadata?.annotations?.[HAMI.registerAnnotation];
  if (register !== undefined) annotations[HAMI.registerAnnotation] = register;
  const capacity = node.status?.capacity?.[GPU_RESOURCE];
  const allocatable = node.status?.allocatable?.[GPU_RESOURCE];
  const ready = (node.status?.conditions ?? []).find((c) => c.type === "Ready");
  // MIG instances the node advertises (nvidia.com/mig-<profile>), by allocatable.
  const mig = Object.fromEntries(
    Object.entries(migResourcesOf(node.status?.allocatable)).map(([p, n]) => [`${MIG_RESOURCE_PREFIX}${p}`, String(n)]),
  );
  return {
    metadata: { name: node.metadata?.name ?? "", labels: { ...(node.metadata?.labels ?? {}) }, annotations },
    spec: { unschedulable: node.spec?.unschedulable === true },
    status: {
      capacity: capacity === undefined ? {} : { [GPU_RESOURCE]: capacity },
      allocatable: { ...(allocatable === undefined ? {} : { [GPU_RESOURCE]: allocatable }), ...mig },
      // Only the status: heartbeat and transition times change on every kubelet (kwok) beat.
      conditions: ready ? [{ type: "Ready", status: ready.status ?? "Unknown" }] : [],
    },
  };
}

/**
 * The pod as inventory sees it: bound, non-terminal, holding GPUs; otherwise undefined (not kept). The
 * phase is dropped on purpose, so Pending → Running wakes nothing; a pod that ends leaves the store.
 */
export function slimPod(pod: PodLike): PodLike | undefined {
  const nodeName = pod.spec?.nodeName;
  if (!nodeName || isTerminal(pod)) return undefined;
  const gpus = podGpus(pod);
  const mig = podMig(pod);
  if (gpus <= 0 && Object.keys(mig).length === 0) return undefined;
  // What a sharing layer needs to tell which card holds how much: the card pin or HAMi's record, and the
  // memory and cores asked for.
  const annotations: Record<string, string> = {};
  for (const k of [HAMI.useUuidAnnotation, HAMI.allocatedAnnotation]) {
    const v = pod.metadata?.annotations?.[k];
    if (v !== undefined) annotations[k] = v;
  }
  const limits: Record<string, string> = gpus > 0 ? { [GPU_RESOURCE]: String(gpus) } : {};
  for (const [p, n] of Object.entries(mig)) limits[`${MIG_RESOURCE_PREFIX}${p}`] = String(n);
  for (const k of [HAMI.memoryResource, HAMI.memoryPercentResource, HAMI.coresResource]) {
    let v: string | number | undefined;
    for (const c of pod.spec?.containers ?? []) v ??= c.resources?.limits?.[k] ?? c.resources?.requests?.[k];
    if (v !== undefined) limits[k] = String(v);
  }
  return {
    metadata: {
      name: pod.metadata?.name ?? "",
      namespace: pod.metadata?.namespace ?? "",
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    },
    spec: { nodeName, containers: [{ resources: { limits } }] },
  };
}
