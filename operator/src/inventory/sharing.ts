// Inventory of a node with a GPU sharing layer (HAMi): its cards from the device plugin's register
// annotation, and what the node's pods hold on each card, so that placement can pack slices by free memory
// and cores (docs/dev/gpu-sharing.md).
//
// Which card a pod holds, in order of trust: HAMi's own record on the pod (`hami.io/vgpu-devices-allocated`,
// written when its scheduler binds), else the cards the pod was pinned to (`nvidia.com/use-gpuuuid`, which
// Berth sets on every session pod), else the first healthy cards with room (an estimate, for pods neither
// records: another tenant's pod before HAMi has bound it).
import { HAMI, type HamiCard, parseHamiAllocated, parseHamiRegister } from "@berth/crds";
import type { GpuDevice } from "@berth/crds/internal-plane";

type Quantities = Record<string, string | number | undefined>;

export interface SharingPod {
  metadata?: { annotations?: Record<string, string> };
  spec?: { containers?: { resources?: { limits?: Quantities; requests?: Quantities } }[] };
}

/** What a pod asks the sharing layer for, per card. */
export interface CardRequest {
  vgpus: number;
  memoryMib?: number;
  memoryPercent?: number;
  cores: number;
}

function quantity(c: { resources?: { limits?: Quantities; requests?: Quantities } }, name: string): number | undefined {
  const v = c.resources?.limits?.[name] ?? c.resources?.requests?.[name];
  if (v === undefined) return undefined;
  const n = typeof v === "number" ? v : Number(String(v).trim());
  return Number.isFinite(n) && n >= 0 ? Math.floor(n) : undefined;
}

/** The pod's request in HAMi's resource names, summed over its containers (Berth's pods have one). */
export function cardRequestOf(pod: SharingPod): CardRequest | undefined {
  let vgpus = 0;
  let memoryMib: number | undefined;
  let memoryPercent: number | undefined;
  let cores = 0;
  for (const c of pod.spec?.containers ?? []) {
    const n = quantity(c, HAMI.vgpuResource) ?? 0;
    if (n === 0) continue;
    vgpus += n;
    const mem = quantity(c, HAMI.memoryResource);
    if (mem !== undefined) memoryMib = Math.max(memoryMib ?? 0, mem);
    const pct = quantity(c, HAMI.memoryPercentResource);
    if (pct !== undefined) memoryPercent = Math.max(memoryPercent ?? 0, pct);
    cores = Math.max(cores, quantity(c, HAMI.coresResource) ?? 0);
  }
  if (vgpus === 0) return undefined;
  return {
    vgpus,
    ...(memoryMib !== undefined ? { memoryMib } : {}),
    ...(memoryPercent !== undefined ? { memoryPercent } : {}),
    cores,
  };
}

interface CardUse {
  card: HamiCard;
  memoryUsed: number;
  coresUsed: number;
  vgpusUsed: number;
}

/** Memory one card of this request takes: gpumem, else a percentage, else the whole card (HAMi's default). */
function memoryOn(req: CardRequest, card: HamiCard): number {
  if (req.memoryMib !== undefined && req.memoryMib > 0) return req.memoryMib;
  if (req.memoryPercent !== undefined && req.memoryPercent <= 100)
    return Math.floor((card.memoryMib * req.memoryPercent) / 100);
  return card.memoryMib;
}

/** The cards of a HAMi node with what its pods hold, or undefined when the node has no HAMi register. */
export function hamiDevices(
  annotations: Record<string, string> | undefined,
  model: string | null,
  pods: readonly SharingPod[],
): GpuDevice[] | undefined {
  const cards = parseHamiRegister(annotations?.[HAMI.registerAnnotation]);
  if (!cards) return undefined;
  const uses: CardUse[] = [...cards]
    .sort((a, b) => a.index - b.index)
    .map((card) => ({ card, memoryUsed: 0, coresUsed: 0, vgpusUsed: 0 }));
  const byUuid = new Map(uses.map((u) => [u.card.uuid, u]));
  const unplaced: { req: CardRequest; allowed?: Set<string> }[] = [];
  for (const pod of pods) {
    const req = cardRequestOf(pod);
    if (!req) continue;
    const allocated = parseHamiAllocated(pod.metadata?.annotations?.[HAMI.allocatedAnnotation]);
    if (allocated.length > 0) {
      for (const a of allocated) {
        const u = byUuid.get(a.uuid);
        if (!u) continue;
        u.memoryUsed += a.memoryMib;
        u.coresUsed += a.cores;
        u.vgpusUsed += 1;
      }
      continue;
    }
    const pinned = pod.metadata?.annotations?.[HAMI.useUuidAnnotation];
    const allowed = pinned
      ? new Set(
          pinned
            .split(",")
            .map((x) => x.trim())
            .filter(Boolean),
        )
      : undefined;
    unplaced.push(allowed ? { req, allowed } : { req });
  }
  // Pinned pods first (their cards are known), then the rest on the first cards with room.
  unplaced.sort((a, b) => Number(b.allowed !== undefined) - Number(a.allowed !== undefined));
  for (const { req, allowed } of unplaced) {
    let left = req.vgpus;
    for (const u of uses) {
      if (left === 0) break;
      if (allowed && !allowed.has(u.card.uuid)) continue;
      const mem = memoryOn(req, u.card);
      const fits =
        allowed !== undefined ||
        (u.card.healthy &&
          u.vgpusUsed < u.card.split &&
          u.memoryUsed + mem <= u.card.memoryMib &&
          u.coresUsed + req.cores <= u.card.cores);
      if (!fits) continue;
      u.memoryUsed += mem;
      u.coresUsed += req.cores;
      u.vgpusUsed += 1;
      left--;
    }
  }
  return uses.map((u, index) => ({
    index,
    model: model ?? (u.card.type || null),
    uuid: u.card.uuid,
    memory_mib: u.card.memoryMib,
    cores: u.card.cores,
    split: u.card.split,
    healthy: u.card.healthy,
    memory_used_mib: u.memoryUsed,
    cores_used: u.coresUsed,
    vgpus_used: u.vgpusUsed,
  }));
}
