// An offering's GPU fraction on the wire ("1", "1/2" … "1/32") and in the spec (`slicesPerCard`),
// with the checks that give each bad input its own code: a fraction Berth does not offer, and a slice
// under what the sharing layer can isolate. docs/dev/gpu-sharing.md.
import {
  checkMigLayout,
  fractionLabel,
  MIG_PROFILE_NAMES,
  MIN_SLICE_MEMORY_MIB,
  type OfferingSpec,
  SLICES_PER_CARD,
  type SlicesPerCard,
  sliceOf,
} from "@berth/crds";
import { DomainError, Invalid } from "../../errors.ts";

export const OFFERED_FRACTIONS = ["1", ...SLICES_PER_CARD.map((n) => `1/${n}`)];

/** "1/4" → 4, "1" → undefined (whole cards); anything else is refused with gpu_fraction_not_offered. */
export function parseFraction(fraction: string): SlicesPerCard | undefined {
  if (fraction === "1") return undefined;
  const m = /^1\/([1-9]\d*)$/.exec(fraction);
  const n = m ? Number(m[1]) : Number.NaN;
  if (!(SLICES_PER_CARD as readonly number[]).includes(n)) {
    throw new DomainError("gpu_fraction_not_offered", `the GPU fraction ${fraction} is not offered`, {
      fraction,
      allowed: OFFERED_FRACTIONS,
    });
  }
  return n as SlicesPerCard;
}

/**
 * Checks a whole offering spec (after a create or a merge of changes) for what a fraction needs: one card,
 * the model's memory, and a slice of at least MIN_SLICE_MEMORY_MIB.
 */
export function checkFraction(given: Record<string, unknown>): void {
  const spec = given as Partial<Pick<OfferingSpec, "gpuCount" | "gpuMemoryMib" | "slicesPerCard">>;
  const n = spec.slicesPerCard;
  if (n === undefined) return;
  const issues = [];
  if ((spec.gpuCount ?? 1) !== 1)
    issues.push({
      path: ["body", "gpu_count"],
      message: "a fraction is of one card: gpu_count must be 1",
      code: "invalid_fraction",
    });
  if (spec.gpuMemoryMib === undefined)
    issues.push({
      path: ["body", "gpu_memory_mib"],
      message: "a fraction needs the model's GPU memory per card (MiB), from which the slice's memory derives",
      code: "invalid_fraction",
    });
  if (issues.length > 0) throw new Invalid("the request is invalid", issues);
  const slice = sliceOf(spec.gpuMemoryMib as number, n);
  if (slice.memoryMib < MIN_SLICE_MEMORY_MIB) {
    const largest = [...SLICES_PER_CARD]
      .reverse()
      .find((k) => sliceOf(spec.gpuMemoryMib as number, k).memoryMib >= MIN_SLICE_MEMORY_MIB);
    throw new DomainError(
      "gpu_slice_too_small",
      `a ${fractionLabel(n)} slice of a ${spec.gpuMemoryMib} MiB card has ${slice.memoryMib} MiB; the least the sharing layer isolates is ${MIN_SLICE_MEMORY_MIB} MiB` +
        (largest ? `; the finest slice that fits is ${fractionLabel(largest)}` : "; no slice of this card fits"),
      {
        fraction: fractionLabel(n),
        slice_memory_mib: slice.memoryMib,
        minimum_mib: MIN_SLICE_MEMORY_MIB,
        largest_fraction: largest ? fractionLabel(largest) : null,
      },
    );
  }
}

/**
 * Checks a MIG offering (after a create or a merge of changes): a profile some card has, of this model, one
 * instance (gpu_count 1) and not also a slice. docs/dev/gpu-sharing.md.
 */
export function checkMigOffering(given: Record<string, unknown>): void {
  const spec = given as Partial<Pick<OfferingSpec, "gpuModel" | "gpuCount" | "slicesPerCard" | "migProfile">>;
  const name = spec.migProfile;
  if (name === undefined) return;
  const problem = checkMigLayout(spec.gpuModel ?? "", { [name]: 1 });
  if (problem?.code === "mig_profile_unknown")
    throw new DomainError("mig_profile_unknown", `no GPU has a MIG profile ${JSON.stringify(name)}`, {
      mig_profile: name,
      allowed: MIG_PROFILE_NAMES,
    });
  if (problem?.code === "mig_profile_not_for_model")
    throw new DomainError(
      "mig_profile_not_for_model",
      problem.allowed.length > 0
        ? `${spec.gpuModel} has no MIG profile ${name}; it has ${problem.allowed.join(", ")}`
        : `${spec.gpuModel} has no MIG profiles`,
      { mig_profile: name, gpu_model: spec.gpuModel ?? null, allowed: problem.allowed },
    );
  const issues = [];
  if ((spec.gpuCount ?? 1) !== 1)
    issues.push({
      path: ["body", "gpu_count"],
      message: "a MIG offering is one instance: gpu_count must be 1",
      code: "invalid_mig",
    });
  if (spec.slicesPerCard !== undefined)
    issues.push({
      path: ["body", "fraction"],
      message: "a MIG offering is not also a fraction: fraction must be 1",
      code: "invalid_mig",
    });
  if (issues.length > 0) throw new Invalid("the request is invalid", issues);
}
