// GPU sharing: the slices an offering may cut a card into, what a slice guarantees, and the names of the
// one sharing layer Berth drives today (HAMi: docs/dev/gpu-sharing.md). Pure and shared by the API
// (catalog checks), the worker (placement), the operator (inventory, pods) and the test bed.

/**
 * An offering is one of N equal slices of one card: 1/2 to 1/32, where the card's memory leaves each slice
 * MIN_SLICE_MEMORY_MIB (an 80 GB card allows 1/32, a 24 GB one 1/16). A card holds as many slices as its
 * sharing layer splits it into (HAMi's deviceSplitCount, 10 by default: 1/16 and 1/32 need more).
 */
export const SLICES_PER_CARD = [2, 4, 8, 16, 32] as const;
export type SlicesPerCard = (typeof SLICES_PER_CARD)[number];

/** HAMi cannot isolate less GPU memory than this usefully; a smaller slice is refused. */
export const MIN_SLICE_MEMORY_MIB = 1024;

/** What one slice guarantees: GPU memory in MiB and a share of the card's cores in percent. */
export interface GpuSlice {
  slicesPerCard: number;
  memoryMib: number;
  cores: number;
}

/** The slice of a card of `cardMemoryMib` (as the cards report it) cut in `slicesPerCard`; floors, so N fit. */
export function sliceOf(cardMemoryMib: number, slicesPerCard: number): GpuSlice {
  return {
    slicesPerCard,
    memoryMib: Math.floor(cardMemoryMib / slicesPerCard),
    cores: Math.floor(100 / slicesPerCard),
  };
}

/** "1/4" for 4; "1" for whole cards. */
export function fractionLabel(slicesPerCard: number | undefined): string {
  return slicesPerCard && slicesPerCard > 1 ? `1/${slicesPerCard}` : "1";
}

/**
 * GPU occupancy of a session: what quotas, policies and availability count (a 1/4 slice counts 0.25, a
 * MIG instance its share of the card, crds/src/mig.ts).
 */
export function gpuOccupancy(
  gpuCount: number,
  slicesPerCard: number | undefined,
  share?: { num: number; den: number } | null,
): number {
  if (share) return (gpuCount * share.num) / share.den;
  return slicesPerCard && slicesPerCard > 1 ? gpuCount / slicesPerCard : gpuCount;
}

/** A session row's MIG share, when it has one. */
export function shareOfRow(r: {
  gpu_share_num?: number | null;
  gpu_share_den?: number | null;
}): { num: number; den: number } | null {
  return r.gpu_share_num && r.gpu_share_den ? { num: r.gpu_share_num, den: r.gpu_share_den } : null;
}

/** Sharing layers Berth knows how to drive. */
export type SharingLayer = "hami";

// HAMi (Project-HAMi/HAMi, NVIDIA devices). Its device plugin publishes `nvidia.com/gpu` as a count of
// vGPUs (cards × deviceSplitCount) and registers each card in a node annotation; its scheduler extender
// and webhook read a pod's `nvidia.com/gpumem` (MiB per card) and `nvidia.com/gpucores` (percent per
// card), and `nvidia.com/use-gpuuuid` restricts the cards a pod may get.
export const HAMI = {
  vgpuResource: "nvidia.com/gpu",
  memoryResource: "nvidia.com/gpumem",
  memoryPercentResource: "nvidia.com/gpumem-percentage",
  coresResource: "nvidia.com/gpucores",
  registerAnnotation: "hami.io/node-nvidia-register",
  handshakeAnnotation: "hami.io/node-handshake",
  useUuidAnnotation: "nvidia.com/use-gpuuuid",
  allocatedAnnotation: "hami.io/vgpu-devices-allocated",
  /** The device plugin's DaemonSet, as HAMi's Helm chart names it. */
  devicePluginDaemonSet: "hami-device-plugin",
} as const;

/** One card as HAMi's device plugin registers it. */
export interface HamiCard {
  uuid: string;
  /** vGPUs the card may be split into (HAMi's deviceSplitCount). */
  split: number;
  memoryMib: number;
  /** Percent (100 = the whole card). */
  cores: number;
  type: string;
  numa: number;
  healthy: boolean;
  /** Position on the node (the register's order when it carries none). */
  index: number;
  mode?: string;
}

/**
 * Parses `hami.io/node-nvidia-register`: newer HAMi writes a JSON array of `{id, index, count, devmem,
 * devcore, type, numa, mode, health}`; older releases `uuid,count,mem,cores,type,numa,health[,index,mode]`
 * entries joined by ':'. Entries that cannot be read are skipped; undefined when nothing can.
 */
export function parseHamiRegister(value: string | undefined): HamiCard[] | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text === "") return undefined;
  const cards: HamiCard[] = [];
  const num = (v: unknown, fallback: number) => {
    const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : Number.NaN;
    return Number.isFinite(n) ? Math.trunc(n) : fallback;
  };
  if (text.startsWith("[")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return undefined;
    }
    if (!Array.isArray(parsed)) return undefined;
    for (const [i, e] of parsed.entries()) {
      if (typeof e !== "object" || e === null) continue;
      const r = e as Record<string, unknown>;
      if (typeof r.id !== "string" || r.id === "") continue;
      cards.push({
        uuid: r.id,
        split: num(r.count, 1),
        memoryMib: num(r.devmem, 0),
        cores: num(r.devcore, 100),
        type: typeof r.type === "string" ? r.type : "",
        numa: num(r.numa, 0),
        healthy: r.health !== false,
        index: num(r.index, i),
        ...(typeof r.mode === "string" ? { mode: r.mode } : {}),
      });
    }
  } else {
    for (const [i, entry] of text.split(":").entries()) {
      const f = entry.split(",");
      if (f.length < 7 || !f[0]) continue;
      cards.push({
        uuid: f[0],
        split: num(f[1], 1),
        memoryMib: num(f[2], 0),
        cores: num(f[3], 100),
        type: f[4] ?? "",
        numa: num(f[5], 0),
        healthy: f[6] === "true",
        index: f.length >= 9 ? num(f[7], i) : i,
        ...(f.length >= 9 && f[8] ? { mode: f[8] } : {}),
      });
    }
  }
  return cards.length > 0 ? cards : undefined;
}

/** The JSON form newer HAMi releases write (what the test bed publishes). */
export function formatHamiRegister(cards: readonly HamiCard[]): string {
  return JSON.stringify(
    cards.map((c) => ({
      id: c.uuid,
      index: c.index,
      count: c.split,
      devmem: c.memoryMib,
      devcore: c.cores,
      type: c.type,
      numa: c.numa,
      mode: c.mode ?? "hami-core",
      health: c.healthy,
    })),
  );
}

/**
 * `hami.io/vgpu-devices-allocated` on a scheduled pod: per container (';'), cards (':') as
 * `uuid,NVIDIA,memMiB,cores`. Returns the cards with what the pod holds on each.
 */
export function parseHamiAllocated(value: string | undefined): { uuid: string; memoryMib: number; cores: number }[] {
  if (!value) return [];
  const out: { uuid: string; memoryMib: number; cores: number }[] = [];
  for (const container of value.split(";"))
    for (const entry of container.split(":")) {
      const f = entry.split(",");
      if (f.length < 4 || !f[0]) continue;
      const mem = Number(f[2]);
      const cores = Number(f[3]);
      out.push({
        uuid: f[0],
        memoryMib: Number.isFinite(mem) ? mem : 0,
        cores: Number.isFinite(cores) ? cores : 0,
      });
    }
  return out;
}
