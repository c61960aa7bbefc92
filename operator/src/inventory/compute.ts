// The pure heart of inventory: Kubernetes Nodes and Pods in, the contract's Node records out. Level-based:
// it sees only the current objects, never events, so a relist, a resync and a watch event all end here.

import {
  GPU_COUNT_LABEL,
  GPU_MEMORY_LABEL,
  GPU_PRODUCT_LABEL,
  GPU_RESOURCE,
  GPU_UUIDS_ANNOTATION,
  MIG_RESOURCE_PREFIX,
  migResourcesOf,
} from "@berth/crds";
import type { GpuDevice, InventoryNode } from "@berth/crds/internal-plane";
import { hamiDevices, type SharingPod } from "./sharing.ts";

type Quantities = Record<string, string | number | undefined>;

/** The part of a Node that inventory reads (raw JSON from the apiserver fits it). */
export interface NodeLike {
  metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { unschedulable?: boolean };
  status?: {
    capacity?: Quantities;
    allocatable?: Quantities;
    conditions?: { type?: string; status?: string }[];
  };
}

interface ContainerLike {
  resources?: { limits?: Quantities; requests?: Quantities };
  restartPolicy?: string;
}

/** The part of a Pod that inventory reads. */
export interface PodLike {
  metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
  spec?: { nodeName?: string; containers?: ContainerLike[]; initContainers?: ContainerLike[] };
  status?: { phase?: string };
}

/** Extended resources are whole numbers; anything else (a malformed value) counts as none. */
export function parseCount(q: string | number | undefined): number {
  if (q === undefined) return 0;
  const n = typeof q === "number" ? q : Number(q.trim());
  return Number.isFinite(n) && n >= 0 ? Math.floor(n) : 0;
}

function containerGpus(c: ContainerLike): number {
  // The device plugin allocates by limit; for extended resources a request, when set, must equal it.
  return parseCount(c.resources?.limits?.[GPU_RESOURCE] ?? c.resources?.requests?.[GPU_RESOURCE]);
}

/**
 * GPUs a pod holds on its node, by the scheduler's rule for effective requests: the larger of the app
 * containers plus sidecars (restartable init containers), and the largest single init container.
 */
export function podGpus(pod: PodLike): number {
  let running = 0;
  for (const c of pod.spec?.containers ?? []) running += containerGpus(c);
  let init = 0;
  for (const c of pod.spec?.initContainers ?? []) {
    if (c.restartPolicy === "Always") running += containerGpus(c);
    else init = Math.max(init, containerGpus(c));
  }
  return Math.max(running, init);
}

/** MIG instances a pod holds, per profile (app containers and sidecars; MIG pods have no init-only devices). */
export function podMig(pod: PodLike): Record<string, number> {
  const out: Record<string, number> = {};
  const containers = [
    ...(pod.spec?.containers ?? []),
    ...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === "Always"),
  ];
  for (const c of containers)
    for (const [profile, n] of Object.entries(migResourcesOf(c.resources?.limits ?? c.resources?.requests)))
      out[profile] = (out[profile] ?? 0) + n;
  return out;
}

/** Per profile: what the node advertises and what its pods hold; undefined when it advertises no MIG. */
function migOf(node: NodeLike, held: Record<string, number> | undefined): InventoryNode["mig"] {
  const allocatable = migResourcesOf(node.status?.allocatable ?? node.status?.capacity);
  const profiles = Object.keys(allocatable).sort();
  if (profiles.length === 0) return undefined;
  const out: NonNullable<InventoryNode["mig"]> = {};
  for (const profile of profiles)
    out[profile] = { allocatable: allocatable[profile] as number, in_use: held?.[profile] ?? 0 };
  return out;
}

/** Succeeded and Failed pods have released their devices; every other phase may hold them. */
export function isTerminal(pod: PodLike): boolean {
  const phase = pod.status?.phase;
  return phase === "Succeeded" || phase === "Failed";
}

/** A node is GPU-relevant when it advertises the GPU resource or carries the GPU product label. */
export function isGpuNode(node: NodeLike): boolean {
  const s = node.status;
  return (
    Object.keys(s?.allocatable ?? {}).some((k) => k.startsWith(MIG_RESOURCE_PREFIX)) ||
    s?.capacity?.[GPU_RESOURCE] !== undefined ||
    s?.allocatable?.[GPU_RESOURCE] !== undefined ||
    node.metadata?.labels?.[GPU_PRODUCT_LABEL] !== undefined
  );
}

function isReady(node: NodeLike): boolean {
  return (node.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");
}

function optionalCount(v: string | undefined): number | undefined {
  if (v === undefined || !/^\d+$/.test(v.trim())) return undefined;
  return Number(v.trim());
}

function devicesOf(node: NodeLike, model: string | null, capacity: number): GpuDevice[] {
  const labels = node.metadata?.labels ?? {};
  // With GPU sharing (time-slicing) capacity counts replicas; the count label counts physical cards.
  const physical = optionalCount(labels[GPU_COUNT_LABEL]) ?? capacity;
  const memory = optionalCount(labels[GPU_MEMORY_LABEL]);
  const uuids = (node.metadata?.annotations?.[GPU_UUIDS_ANNOTATION] ?? "")
    .split(",")
    .map((u) => u.trim())
    .filter((u) => u !== "");
  const devices: GpuDevice[] = [];
  for (let index = 0; index < physical; index++) {
    const d: GpuDevice = { index, model };
    const uuid = uuids[index];
    if (uuid !== undefined) d.uuid = uuid;
    if (memory !== undefined) d.memory_mib = memory;
    devices.push(d);
  }
  return devices;
}

function sortedLabels(labels: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(labels ?? {}).sort()) out[k] = (labels as Record<string, string>)[k] as string;
  return out;
}

/**
 * The cluster's GPU inventory: one record per GPU-relevant node, sorted by name, with labels in key order,
 * so that two calls over the same facts give byte-identical JSON (see `sameInventory`).
 */
export function computeInventory(nodes: Iterable<NodeLike>, pods: Iterable<PodLike>): InventoryNode[] {
  const inUse = new Map<string, number>();
  const podsOn = new Map<string, SharingPod[]>();
  const migOn = new Map<string, Record<string, number>>();
  for (const pod of pods) {
    const node = pod.spec?.nodeName;
    if (!node || isTerminal(pod)) continue;
    const mig = podMig(pod);
    if (Object.keys(mig).length > 0) {
      const held = migOn.get(node) ?? {};
      for (const [profile, k] of Object.entries(mig)) held[profile] = (held[profile] ?? 0) + k;
      migOn.set(node, held);
    }
    const n = podGpus(pod);
    if (n > 0) {
      inUse.set(node, (inUse.get(node) ?? 0) + n);
      podsOn.set(node, [...(podsOn.get(node) ?? []), pod as SharingPod]);
    }
  }
  const out: InventoryNode[] = [];
  for (const node of nodes) {
    const name = node.metadata?.name;
    if (!name || !isGpuNode(node)) continue;
    const model = node.metadata?.labels?.[GPU_PRODUCT_LABEL] ?? null;
    // With HAMi, nvidia.com/gpu counts vGPUs: cards, their health and what pods hold come from its register.
    const shared = hamiDevices(node.metadata?.annotations, model, podsOn.get(name) ?? []);
    if (shared) {
      const healthy = shared.filter((d) => d.healthy !== false);
      out.push({
        name,
        gpu_model: model ?? shared[0]?.model ?? null,
        gpu_count: shared.length,
        gpu_allocatable: healthy.length,
        // Whole cards: a card with any slice on it is not free for a whole-card session.
        gpu_in_use: healthy.filter((d) => (d.vgpus_used ?? 0) > 0).length,
        labels: sortedLabels(node.metadata?.labels),
        schedulable: node.spec?.unschedulable !== true,
        ready: isReady(node),
        devices: shared,
        gpu_sharing: "hami",
      });
      continue;
    }
    const count = parseCount(node.status?.capacity?.[GPU_RESOURCE]);
    out.push({
      name,
      gpu_model: model,
      gpu_count: count,
      gpu_allocatable: parseCount(node.status?.allocatable?.[GPU_RESOURCE]),
      gpu_in_use: inUse.get(name) ?? 0,
      labels: sortedLabels(node.metadata?.labels),
      schedulable: node.spec?.unschedulable !== true,
      ready: isReady(node),
      devices: devicesOf(node, model, count),
      ...withMig(migOf(node, migOn.get(name))),
    });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function withMig(mig: InventoryNode["mig"]): Pick<InventoryNode, "mig"> {
  return mig ? { mig } : {};
}

/** A canonical fingerprint of an inventory: equal strings mean nothing a report carries has changed. */
export function inventoryFingerprint(nodes: readonly InventoryNode[]): string {
  return JSON.stringify(nodes);
}
