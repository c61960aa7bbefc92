// What a session would cost: the hourly rate of its offering for its GPU count, and the cost of a
// duration, in integer minor units (1 credit = 1,000,000) as strings; never a float.
// Rate of a session = offering rate × session GPUs / offering GPUs (an offering's rate is for its own
// GPU count; a 2-GPU preset on a 1-GPU offering costs twice). Costs are rounded up to a whole unit.
import { MINOR_UNITS_PER_CREDIT } from "@berth/crds";
import type { Deps } from "../../deps.ts";
import { Invalid } from "../../errors.ts";
import { gpuAvailability } from "./gpuAvailability.ts";
import { sessionsRuntimeOf } from "./runtime.ts";

export interface CostPreview {
  offering: string;
  gpuModel: string;
  gpuCount: number;
  hourlyRate: string;
  durationSeconds: number;
  cost: string;
  gpuAvailableNow: boolean;
}

export function sessionHourlyRate(offeringRate: string, offeringGpus: number, sessionGpus: number): bigint {
  return (BigInt(offeringRate) * BigInt(sessionGpus)) / BigInt(Math.max(1, offeringGpus));
}

export function costOf(hourlyRate: bigint, seconds: number): bigint {
  return (hourlyRate * BigInt(seconds) + 3599n) / 3600n;
}

export function credits(minor: bigint): string {
  const whole = minor / MINOR_UNITS_PER_CREDIT;
  const frac = (minor % MINOR_UNITS_PER_CREDIT).toString().padStart(6, "0").replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : whole.toString();
}

export async function previewCost(
  deps: Deps,
  input: { offering: string; preset?: string; duration_seconds: number },
): Promise<CostPreview> {
  const { catalog } = sessionsRuntimeOf(deps);
  const [offering, preset] = await Promise.all([
    catalog.offering(input.offering),
    input.preset ? catalog.preset(input.preset) : Promise.resolve(undefined),
  ]);
  const issues = [
    ...(!offering ? [{ path: ["body", "offering"], message: "no such offering", code: "invalid_reference" }] : []),
    ...(input.preset && !preset
      ? [{ path: ["body", "preset"], message: "no such preset", code: "invalid_reference" }]
      : []),
  ];
  if (!offering || issues.length > 0) throw new Invalid("the request is invalid", issues);
  const gpuCount = preset && preset.spec.gpuCount > 0 ? preset.spec.gpuCount : offering.spec.gpuCount;
  const rate = sessionHourlyRate(offering.spec.hourlyCreditRate, offering.spec.gpuCount, gpuCount);
  const avail = await gpuAvailability(deps);
  return {
    offering: input.offering,
    gpuModel: offering.spec.gpuModel,
    gpuCount,
    hourlyRate: rate.toString(),
    durationSeconds: input.duration_seconds,
    cost: costOf(rate, input.duration_seconds).toString(),
    gpuAvailableNow: avail.clusters.some(
      (c) => c.gpuModel === offering.spec.gpuModel && c.free >= gpuCount && c.largestNode >= gpuCount,
    ),
  };
}
