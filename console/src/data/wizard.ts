// Pure helpers of the create-session wizard: free GPUs per cluster for an offering's model, the images a
// member sees (their own tagged), and the Idempotency-Key that stays the same while the request does.

export interface AvailabilityRow {
  cluster_id: string;
  cluster_name: string;
  gpu_model: string;
  total: number;
  in_use: number;
  free: number;
  largest_node: number;
  /** With a GPU sharing layer: whole cards nothing holds, and slices that still fit per fraction. */
  sharing?: boolean;
  whole_free?: number;
  slices_free?: Record<string, number>;
  /** MIG instances free per profile on nodes marked with a layout (none: no key). */
  mig_free?: Record<string, number>;
}

/** What the wizard shows of an offering's tier: whole cards, or a slice with the memory it guarantees. */
export interface TierLike {
  gpu_count: number;
  gpu_model: string;
  fraction?: string;
  slice_memory_mib?: number | null;
  /** A MIG instance of this profile, and its share of the card ("1/2", "3/7"). */
  mig_profile?: string | null;
  card_share?: string;
}

export function isSlice(o: TierLike): boolean {
  return o.fraction !== undefined && o.fraction !== "1";
}

/** "1/8 of NVIDIA-H100-80GB-HBM3 · 9.9 GiB GPU memory", "MIG 3g.40gb of … · 1/2 of the card" or "2 × …". */
export function tierLabel(o: TierLike): string {
  if (o.mig_profile)
    return `MIG ${o.mig_profile} of ${o.gpu_model}${o.card_share ? ` · ${o.card_share} of the card` : ""}`;
  if (!isSlice(o)) return `${o.gpu_count} × ${o.gpu_model}`;
  const gib = ((o.slice_memory_mib ?? 0) / 1024).toFixed(1);
  return `${o.fraction} of ${o.gpu_model} · ${gib} GiB GPU memory`;
}

/**
 * Room for an offering now, summed over clusters: slices of its fraction for a slice (only clusters with
 * a sharing layer take them), whole cards otherwise.
 */
export function roomForOffering(
  rows: readonly AvailabilityRow[],
  o: TierLike,
): { free: number; total: number; unit: string } {
  const mine = rows.filter((r) => r.gpu_model === o.gpu_model);
  if (o.mig_profile) {
    const p = o.mig_profile;
    return { free: mine.reduce((n, r) => n + (r.mig_free?.[p] ?? 0), 0), total: 0, unit: `MIG ${p} instances` };
  }
  if (isSlice(o)) {
    const f = o.fraction as string;
    const per = Number(f.split("/")[1]) || 1;
    const sharing = mine.filter((r) => r.sharing);
    return {
      free: sharing.reduce((n, r) => n + (r.slices_free?.[f] ?? 0), 0),
      total: sharing.reduce((n, r) => n + r.total * per, 0),
      unit: `${f} slices`,
    };
  }
  return { ...freeForModel(rows, o.gpu_model), unit: "GPUs" };
}

/**
 * Whether the wizard offers it: a MIG offering only where some cluster's marked nodes advertise its profile
 * (an instance need not be free now: the session then waits); every other offering always.
 */
export function offeredNow(rows: readonly AvailabilityRow[], o: TierLike): boolean {
  if (!o.mig_profile) return true;
  const p = o.mig_profile;
  return rows.some((r) => r.gpu_model === o.gpu_model && r.mig_free?.[p] !== undefined);
}

export interface ClusterChoice {
  id: string;
  name: string;
  free: number;
  total: number;
  fits: boolean;
}

/**
 * Clusters that have the model, most free first; `fits` when one node can hold the GPU count now. For a
 * slice (`fraction` "1/4"…), only clusters with a sharing layer, counted in slices of that fraction.
 */
export function clustersForModel(
  rows: readonly AvailabilityRow[],
  model: string,
  gpuCount: number,
  fraction?: string,
  migProfile?: string | null,
): ClusterChoice[] {
  if (migProfile)
    return rows
      .filter((r) => r.gpu_model === model && r.mig_free?.[migProfile] !== undefined)
      .map((r) => {
        const free = r.mig_free?.[migProfile] ?? 0;
        return { id: r.cluster_id, name: r.cluster_name, free, total: free, fits: free > 0 };
      })
      .sort((a, b) => b.free - a.free || a.name.localeCompare(b.name));
  const slice = fraction !== undefined && fraction !== "1";
  return rows
    .filter((r) => r.gpu_model === model && (!slice || r.sharing))
    .map((r) => {
      const free = slice ? (r.slices_free?.[fraction as string] ?? 0) : (r.whole_free ?? r.free);
      return {
        id: r.cluster_id,
        name: r.cluster_name,
        free,
        total: slice ? r.total * (Number((fraction as string).split("/")[1]) || 1) : r.total,
        fits: slice ? free > 0 : free >= gpuCount && r.largest_node >= gpuCount,
      };
    })
    .sort((a, b) => b.free - a.free || a.name.localeCompare(b.name));
}

export function freeForModel(rows: readonly AvailabilityRow[], model: string): { free: number; total: number } {
  return rows
    .filter((r) => r.gpu_model === model)
    .reduce((a, r) => ({ free: a.free + r.free, total: a.total + r.total }), { free: 0, total: 0 });
}

export interface ImageLike {
  name: string;
  visibility: "public" | "private";
  owner: string | null;
}

export type ImageTag = "yours" | "private" | undefined;

/** Private images are tagged: the member's own as "yours", another's (seen by admins) as "private". */
export function imageTag(img: ImageLike, userId: string | undefined): ImageTag {
  if (img.visibility !== "private") return undefined;
  return img.owner && img.owner === userId ? "yours" : "private";
}

/** The member's own images first, then public ones, then others' private ones; by name within each. */
export function sortImages<T extends ImageLike>(images: readonly T[], userId: string | undefined): T[] {
  const rank = (i: T) => (imageTag(i, userId) === "yours" ? 0 : i.visibility === "public" ? 1 : 2);
  return [...images].sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
}

/**
 * One key per distinct request: retrying the same request (after a network error) reuses its key, so the
 * API returns the first result; changing any field makes a new request with a new key.
 */
export class IdempotencyKeys {
  #keys = new Map<string, string>();
  readonly #make: () => string;
  constructor(make: () => string) {
    this.#make = make;
  }
  for(body: unknown): string {
    const k = JSON.stringify(body);
    let v = this.#keys.get(k);
    if (!v) {
      v = this.#make();
      this.#keys.set(k, v);
    }
    return v;
  }
}
