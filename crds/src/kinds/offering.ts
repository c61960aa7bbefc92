import { z } from "zod";
import { DisplayName, MinorUnits, rule } from "../fields.ts";
import { MIN_SLICE_MEMORY_MIB, SLICES_PER_CARD } from "../gpu-sharing.ts";
import { defineKind, statusOf } from "../kind.ts";
import { MigProfileName } from "./session.ts";

const FRACTION_RULE =
  "!has(self.slicesPerCard) || (self.slicesPerCard in [2, 4, 8, 16, 32] && self.gpuCount == 1 && has(self.gpuMemoryMib) && self.gpuMemoryMib / self.slicesPerCard >= 1024)";

const FractionalOfferingSpec = rule(
  z.object({
    displayName: DisplayName,
    /** As GPU nodes label it (nvidia.com/gpu.product), e.g. NVIDIA-H100-80GB-HBM3. */
    gpuModel: z.string().min(1).max(253),
    tier: z.string().min(1).max(63),
    gpuCount: z.int().min(1).max(64).default(1),
    /** One card's GPU memory as the cards report it (MiB); a slice's guaranteed memory derives from it. */
    gpuMemoryMib: z.int().min(1024).max(4_194_304).optional(),
    /**
     * A fraction of one card: the offering is one of this many equal slices (2, 4, 8, 16 or 32: 1/2 to 1/32),
     * each with gpuMemoryMib / slicesPerCard of memory and 100 / slicesPerCard percent of the cores.
     * Absent: gpuCount whole cards. Needs a sharing layer on the cluster (docs/dev/gpu-sharing.md).
     */
    slicesPerCard: z.int().min(2).max(32).optional(),
    /**
     * A MIG profile of the model's cards ("1g.10gb"): the offering is one such instance, billed at the profile's
     * share of the card (crds/src/mig.ts). With gpuCount 1 and no slicesPerCard. Absent: no MIG.
     */
    migProfile: MigProfileName.optional(),
    /** Credits per hour in minor units (1 credit = 1,000,000). */
    hourlyCreditRate: MinorUnits,
    description: z.string().max(4096).optional(),
    /**
     * Borrowed capacity (docs/dev/fair-share.md) is charged this many thousandths of the rate (300: 0.3x);
     * absent: the full rate.
     */
    borrowedRatePermille: z.int().min(1).max(1000).optional(),
    /** Disabled offerings are not offered for new sessions; running ones keep their rate. */
    enabled: z.boolean().default(true),
  }),
  FRACTION_RULE,
  `a fractional offering is 1/2, 1/4, 1/8, 1/16 or 1/32 of one card (gpuCount 1) with gpuMemoryMib, and a slice has at least ${MIN_SLICE_MEMORY_MIB} MiB`,
  (s) =>
    s.slicesPerCard === undefined ||
    ((SLICES_PER_CARD as readonly number[]).includes(s.slicesPerCard) &&
      s.gpuCount === 1 &&
      s.gpuMemoryMib !== undefined &&
      Math.floor(s.gpuMemoryMib / s.slicesPerCard) >= MIN_SLICE_MEMORY_MIB),
);
const MIG_RULE = "!has(self.migProfile) || (self.gpuCount == 1 && !has(self.slicesPerCard))";
/** A MIG offering is one instance on one card, and not also a HAMi slice. */
export const OfferingSpec = rule(
  FractionalOfferingSpec,
  MIG_RULE,
  "a MIG offering is one instance (gpuCount 1) and has no slicesPerCard",
  (s) => s.migProfile === undefined || (s.gpuCount === 1 && s.slicesPerCard === undefined),
);
export type OfferingSpec = z.infer<typeof OfferingSpec>;

export const OfferingStatus = statusOf({});
export type OfferingStatus = z.infer<typeof OfferingStatus>;

export const OfferingKind = defineKind({
  kind: "Offering",
  plural: "offerings",
  shortNames: ["offer"],
  namespaced: false,
  description: "A GPU configuration users pick when creating a session, with its hourly credit rate.",
  spec: OfferingSpec,
  status: OfferingStatus,
  printerColumns: [
    { name: "GPU Model", type: "string", jsonPath: ".spec.gpuModel" },
    { name: "Tier", type: "string", jsonPath: ".spec.tier" },
    { name: "GPUs", type: "integer", jsonPath: ".spec.gpuCount" },
    { name: "Slices", type: "integer", jsonPath: ".spec.slicesPerCard", description: "slices per card", priority: 1 },
    { name: "MIG", type: "string", jsonPath: ".spec.migProfile", description: "MIG profile", priority: 1 },
    { name: "Rate", type: "string", jsonPath: ".spec.hourlyCreditRate", description: "minor units per hour" },
    { name: "Enabled", type: "boolean", jsonPath: ".spec.enabled", priority: 1 },
  ],
});
export const Offering = OfferingKind.schema;
export type Offering = z.infer<typeof Offering>;
