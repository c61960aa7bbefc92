// MIG (Multi-Instance GPU): the profiles a card can be partitioned into, what each is worth as a share of
// the card, and the check of an administrator's layout. Pure and shared by the API (catalog, layouts,
// billing), the worker (placement), the operator (inventory, pods) and the test bed. docs/dev/gpu-sharing.md.
//
// A card has 7 compute slices and 8 memory slices; a profile `<c>g.<m>gb` takes c compute and some memory
// slices. Its share of the card is the larger of the two fractions, the rule HAMi tiers follow too: a
// profile that holds half the memory keeps half the card from everyone else, whatever its compute.

/** The extended resource NVIDIA's device plugin (mixed strategy) publishes per profile: nvidia.com/mig-1g.10gb. */
export const MIG_RESOURCE_PREFIX = "nvidia.com/mig-";
export const MIG_COMPUTE_SLICES = 7;
export const MIG_MEMORY_SLICES = 8;

export interface MigProfile {
  /** As the resource names it: "1g.10gb". */
  name: string;
  computeSlices: number;
  memorySlices: number;
  /** The most instances of it one card holds. */
  maxPerCard: number;
}

const p = (name: string, computeSlices: number, memorySlices: number, maxPerCard: number): MigProfile => ({
  name,
  computeSlices,
  memorySlices,
  maxPerCard,
});

// Cards of 80 GB (H100, A100 80GB) and 40 GB (A100 40GB) differ only in the memory the same slices hold.
const EIGHTY = [
  p("1g.10gb", 1, 1, 7),
  p("1g.20gb", 1, 2, 4),
  p("2g.20gb", 2, 2, 3),
  p("3g.40gb", 3, 4, 2),
  p("4g.40gb", 4, 4, 1),
  p("7g.80gb", 7, 8, 1),
];
const FORTY = [
  p("1g.5gb", 1, 1, 7),
  p("1g.10gb", 1, 2, 4),
  p("2g.10gb", 2, 2, 3),
  p("3g.20gb", 3, 4, 2),
  p("4g.20gb", 4, 4, 1),
  p("7g.40gb", 7, 8, 1),
];

/** MIG-capable models by `nvidia.com/gpu.product`, with their profiles. Models not listed have no MIG. */
export const MIG_PROFILES: Readonly<Record<string, readonly MigProfile[]>> = {
  "NVIDIA-H100-80GB-HBM3": EIGHTY,
  "NVIDIA-A100-SXM4-80GB": EIGHTY,
  "NVIDIA-A100-SXM4-40GB": FORTY,
};

/** Every profile name of any model, for `allowed` in refusals. */
export const MIG_PROFILE_NAMES: readonly string[] = [
  ...new Set(Object.values(MIG_PROFILES).flatMap((ps) => ps.map((x) => x.name))),
].sort();

/**
 * The MIG profiles of a card model, or undefined. A model name comes from a request: an own key only
 * ("constructor" or "__proto__" are not models).
 */
export function migProfilesOf(gpuModel: string): readonly MigProfile[] | undefined {
  return Object.hasOwn(MIG_PROFILES, gpuModel) ? MIG_PROFILES[gpuModel] : undefined;
}

export function migProfileOf(gpuModel: string, name: string): MigProfile | undefined {
  return migProfilesOf(gpuModel)?.find((x) => x.name === name);
}

/** A share of one card as an exact fraction (num/den), so rates and sums of shares stay exact. */
export interface CardShare {
  num: number;
  den: number;
}

/** The larger of compute (of 7) and memory (of 8): 1g.10gb 1/7, 1g.20gb 1/4, 3g.40gb 1/2, 4g.40gb 4/7. */
export function migShare(profile: MigProfile): CardShare {
  const compute = { num: profile.computeSlices, den: MIG_COMPUTE_SLICES };
  const memory = { num: profile.memorySlices, den: MIG_MEMORY_SLICES };
  const larger = compute.num * memory.den >= memory.num * compute.den ? compute : memory;
  const g = gcd(larger.num, larger.den);
  return { num: larger.num / g, den: larger.den / g };
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** The hourly rate of a profile at its share of a whole card's rate (minor units, rounded down). */
export function migRate(wholeCardRate: number, share: CardShare): number {
  return Math.floor((wholeCardRate * share.num) / share.den);
}

/** How a layout (instances of each profile on one card) fails, or undefined when it fits. */
export type LayoutProblem =
  | { code: "mig_profile_unknown"; profile: string }
  | { code: "mig_profile_not_for_model"; profile: string; gpuModel: string; allowed: string[] }
  | {
      code: "mig_layout_overfilled";
      computeSlices: number;
      memorySlices: number;
      profile?: string;
      maxPerCard?: number;
    };

/**
 * Checks one card's layout: known profiles of this model, at most each profile's instances per card, and
 * together no more than 7 compute and 8 memory slices. The sums are necessary, not sufficient: NVIDIA's
 * partitioner also places instances at fixed offsets and refuses a few layouts the sums allow.
 */
export function checkMigLayout(gpuModel: string, layout: Readonly<Record<string, number>>): LayoutProblem | undefined {
  const profiles = migProfilesOf(gpuModel);
  let compute = 0;
  let memory = 0;
  for (const [name, count] of Object.entries(layout)) {
    if (!MIG_PROFILE_NAMES.includes(name)) return { code: "mig_profile_unknown", profile: name };
    const profile = profiles?.find((x) => x.name === name);
    if (!profile)
      return {
        code: "mig_profile_not_for_model",
        profile: name,
        gpuModel,
        allowed: (profiles ?? []).map((x) => x.name),
      };
    if (count > profile.maxPerCard)
      return {
        code: "mig_layout_overfilled",
        computeSlices: profile.computeSlices * count,
        memorySlices: profile.memorySlices * count,
        profile: name,
        maxPerCard: profile.maxPerCard,
      };
    compute += profile.computeSlices * count;
    memory += profile.memorySlices * count;
  }
  if (compute > MIG_COMPUTE_SLICES || memory > MIG_MEMORY_SLICES)
    return { code: "mig_layout_overfilled", computeSlices: compute, memorySlices: memory };
  return undefined;
}

/** `nvidia.com/mig-<profile>` resources of a node (allocatable, capacity) as profile → count. */
export function migResourcesOf(quantities: Readonly<Record<string, string | number | undefined>> | undefined) {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(quantities ?? {})) {
    if (!k.startsWith(MIG_RESOURCE_PREFIX) || v === undefined) continue;
    const n = Number(String(v).trim());
    if (Number.isFinite(n) && n > 0) out[k.slice(MIG_RESOURCE_PREFIX.length)] = Math.floor(n);
  }
  return out;
}
