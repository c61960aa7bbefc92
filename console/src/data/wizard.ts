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
}

export interface ClusterChoice {
  id: string;
  name: string;
  free: number;
  total: number;
  fits: boolean;
}

/** Clusters that have the model, most free first; `fits` when one node can hold the GPU count now. */
export function clustersForModel(rows: readonly AvailabilityRow[], model: string, gpuCount: number): ClusterChoice[] {
  return rows
    .filter((r) => r.gpu_model === model)
    .map((r) => ({
      id: r.cluster_id,
      name: r.cluster_name,
      free: r.free,
      total: r.total,
      fits: r.free >= gpuCount && r.largest_node >= gpuCount,
    }))
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
