import { z } from "zod";
import { DisplayName, MinorUnits } from "../fields.ts";
import { defineKind, statusOf } from "../kind.ts";

export const OfferingSpec = z.object({
  displayName: DisplayName,
  /** As GPU nodes label it (nvidia.com/gpu.product), e.g. NVIDIA-H100-80GB-HBM3. */
  gpuModel: z.string().min(1).max(253),
  tier: z.string().min(1).max(63),
  gpuCount: z.int().min(1).max(64).default(1),
  /** Credits per hour in minor units (1 credit = 1,000,000). */
  hourlyCreditRate: MinorUnits,
  description: z.string().max(4096).optional(),
  /** Disabled offerings are not offered for new sessions; running ones keep their rate. */
  enabled: z.boolean().default(true),
});
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
    { name: "Rate", type: "string", jsonPath: ".spec.hourlyCreditRate", description: "minor units per hour" },
    { name: "Enabled", type: "boolean", jsonPath: ".spec.enabled", priority: 1 },
  ],
});
export const Offering = OfferingKind.schema;
export type Offering = z.infer<typeof Offering>;
