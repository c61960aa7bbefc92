// Wire shapes of the catalog: snake_case views of the berth.dev custom resources. Field constraints come
// from @berth/crds (one source); the kind's own schema validates the whole object again on write.
import {
  DisplayName,
  ImageKindName,
  ImageReference,
  ImageVisibility,
  LabelValue,
  MIG_PROFILE_NAMES,
  MinorUnits,
  PolicyScopeKind,
  PresetKindName,
  Quantity,
  ResourceName,
} from "@berth/crds";
import { z } from "zod";
import { Page } from "../../db/paging.ts";

const Created = z
  .string()
  .nullable()
  .meta({ description: "When the object was created (RFC 3339), as the management cluster records it." });
const Description = z.string().max(4096);
export const NameParams = z.object({ name: ResourceName });

// --- offerings ------------------------------------------------------------------------------------------

export const Offering = z
  .object({
    name: z.string().meta({ example: "h100" }),
    display_name: z.string(),
    gpu_model: z
      .string()
      .meta({ description: "As GPU nodes label it (nvidia.com/gpu.product).", example: "NVIDIA-H100-80GB-HBM3" }),
    tier: z.string(),
    gpu_count: z.int(),
    fraction: z.string().meta({
      description: 'Whole cards ("1": gpu_count of them) or a slice of one card: "1/2", "1/4", "1/8", "1/16", "1/32".',
      example: "1/4",
    }),
    gpu_memory_mib: z.int().nullable().meta({ description: "One card's GPU memory (MiB), as the cards report it." }),
    mig_profile: z.string().nullable().meta({
      description: "A MIG instance of this profile of one card (e.g. 3g.40gb); null: whole cards or a slice.",
      example: "3g.40gb",
    }),
    card_share: z.string().meta({
      description:
        'The share of one card a session holds, which quotas and fair share count: "1" per card, "1/8" for a slice, a MIG profile\'s larger of compute (of 7) and memory (of 8), e.g. "3/7".',
      example: "1/7",
    }),
    slice_memory_mib: z
      .int()
      .nullable()
      .meta({ description: "GPU memory a session of this offering is guaranteed (MiB); null for whole cards." }),
    slice_cores: z
      .int()
      .nullable()
      .meta({ description: "Percent of the card's cores a slice gets; null for whole cards." }),
    hourly_credit_rate: z.string().meta({
      description: "Credits per hour in minor units (1 credit = 1,000,000), as a string.",
      example: "4000000",
    }),
    borrowed_rate_multiplier: z.number().meta({
      description: "Borrowed capacity is charged this fraction of the rate (docs/dev/fair-share.md); 1: the full rate.",
      example: 0.3,
    }),
    description: z.string().nullable(),
    enabled: z.boolean(),
    created_at: Created,
  })
  .meta({ id: "Offering" });
export type Offering = z.infer<typeof Offering>;

const OfferingFields = {
  display_name: DisplayName,
  gpu_model: LabelValue.meta({
    description: "As GPU nodes label it (nvidia.com/gpu.product): a label value, e.g. NVIDIA-H100-80GB-HBM3.",
  }),
  tier: z.string().min(1).max(63),
  gpu_count: z.int().min(1).max(64),
  fraction: z
    .string()
    .max(16)
    .meta({
      description:
        '"1" (whole cards), "1/2", "1/4", "1/8", "1/16" or "1/32" of one card; others: gpu_fraction_not_offered. A slice has at least 1 GiB: gpu_slice_too_small names the finest fraction that fits.',
      // The values offered, stated for clients; other text gets its own code rather than validation_failed.
      enum: ["1", "1/2", "1/4", "1/8", "1/16", "1/32"],
    }),
  gpu_memory_mib: z.int().min(1024).max(4_194_304).nullable(),
  mig_profile: z
    .string()
    .min(1)
    .max(32)
    .nullable()
    .meta({
      description:
        "A MIG profile of the model's cards (e.g. 1g.10gb); mig_profile_unknown or mig_profile_not_for_model otherwise. null removes it.",
      // The profiles any card has, stated for clients; other text gets its own code rather than validation_failed.
      enum: [...MIG_PROFILE_NAMES, null],
    }),
  hourly_credit_rate: MinorUnits.meta({ description: "Credits per hour in minor units, a string of digits." }),
  borrowed_rate_multiplier: z
    .number()
    .min(0.001)
    .max(1)
    .refine((m) => Math.abs(Math.round(m * 1000) - m * 1000) < 1e-9, { message: "at most three decimals" })
    .meta({ description: "Fraction of the rate borrowed capacity pays, 0.001–1 (three decimals).", example: 0.3 }),
  description: Description,
  enabled: z.boolean(),
};
export const CreateOfferingBody = z
  .object({
    name: ResourceName,
    ...OfferingFields,
    gpu_count: OfferingFields.gpu_count.optional(),
    fraction: OfferingFields.fraction.optional(),
    gpu_memory_mib: OfferingFields.gpu_memory_mib.optional(),
    mig_profile: OfferingFields.mig_profile.optional(),
    borrowed_rate_multiplier: OfferingFields.borrowed_rate_multiplier.optional(),
    description: Description.optional(),
    enabled: z.boolean().optional(),
  })
  .meta({ id: "CreateOfferingRequest" });
export const UpdateOfferingBody = z.object(OfferingFields).partial().meta({ id: "UpdateOfferingRequest" });
export const ListOfferingsQuery = Page;

// --- resource presets -----------------------------------------------------------------------------------

export const ResourcePreset = z
  .object({
    name: z.string().meta({ example: "gpu-small" }),
    display_name: z.string(),
    kind: PresetKindName,
    cpu: z.string().meta({ example: "8" }),
    memory: z.string().meta({ example: "64Gi" }),
    gpu_count: z.int(),
    created_at: Created,
  })
  .meta({ id: "ResourcePreset" });
export type ResourcePreset = z.infer<typeof ResourcePreset>;

const PresetFields = {
  display_name: DisplayName,
  kind: PresetKindName,
  cpu: Quantity,
  memory: Quantity,
  gpu_count: z.int().min(0).max(64),
};
export const CreateResourcePresetBody = z
  .object({ name: ResourceName, ...PresetFields, gpu_count: PresetFields.gpu_count.optional() })
  .meta({ id: "CreateResourcePresetRequest" });
export const UpdateResourcePresetBody = z.object(PresetFields).partial().meta({ id: "UpdateResourcePresetRequest" });
export const ListResourcePresetsQuery = Page.extend({ kind: PresetKindName.optional() });

// --- images ---------------------------------------------------------------------------------------------

export const Image = z
  .object({
    name: z.string().meta({ example: "jupyterlab" }),
    display_name: z.string(),
    image: z.string().meta({ description: "Container image reference, pullable from every cluster." }),
    kind: ImageKindName,
    visibility: ImageVisibility,
    owner: z.string().nullable().meta({ description: "User id of a private image's owner." }),
    description: z.string().nullable(),
    created_at: Created,
  })
  .meta({ id: "Image" });
export type Image = z.infer<typeof Image>;

const ImageFields = {
  display_name: DisplayName,
  image: ImageReference,
  kind: ImageKindName,
  visibility: ImageVisibility,
  owner: z
    .string()
    .regex(/^usr_[a-z0-9]{1,64}$/, "a user id: usr_ followed by lowercase letters and digits")
    .meta({
      description: "The id of an enabled account (a private image's owner).",
    }),
  description: Description,
};
export const CreateImageBody = z
  .object({
    name: ResourceName,
    ...ImageFields,
    visibility: ImageVisibility.optional(),
    owner: ImageFields.owner.optional(),
    description: Description.optional(),
  })
  .meta({ id: "CreateImageRequest" });
export const UpdateImageBody = z.object(ImageFields).partial().meta({ id: "UpdateImageRequest" });
export const ListImagesQuery = Page.extend({ kind: ImageKindName.optional() });

// --- resource policies ----------------------------------------------------------------------------------

const Count = z.int().min(0);
export const PolicyLimits = z
  .object({
    max_gpus_per_user: Count.optional(),
    max_gpus_per_project: Count.optional(),
    max_gpus_per_organization: Count.optional(),
    max_concurrent_sessions_per_user: Count.optional(),
    max_session_hours: Count.optional(),
    max_volume_gb_per_user: Count.optional(),
    max_volume_gb_per_project: Count.optional(),
    max_priority: z.int32().optional(),
  })
  .meta({ id: "ResourcePolicyLimits", description: "Absent: no limit at this scope." });

const Minutes = z.int().min(10).max(10_080);
export const PolicyIdle = z
  .object({
    timeout_minutes: z.int().min(0).max(10_080).optional().meta({ description: "0 turns idle pausing off." }),
    min_timeout_minutes: Minutes.optional(),
    max_timeout_minutes: Minutes.optional(),
    gpu_utilization_percent: z.number().min(0).max(100).optional(),
    keep_running_max: z.int().min(0).max(100).optional(),
  })
  .refine(
    (i) =>
      i.min_timeout_minutes === undefined ||
      i.max_timeout_minutes === undefined ||
      i.min_timeout_minutes <= i.max_timeout_minutes,
    { message: "min_timeout_minutes must not exceed max_timeout_minutes", path: ["min_timeout_minutes"] },
  )
  .refine(
    (i) =>
      !i.timeout_minutes ||
      ((i.min_timeout_minutes === undefined || i.timeout_minutes >= i.min_timeout_minutes) &&
        (i.max_timeout_minutes === undefined || i.timeout_minutes <= i.max_timeout_minutes)),
    {
      message: "timeout_minutes must lie between min_timeout_minutes and max_timeout_minutes",
      path: ["timeout_minutes"],
    },
  )
  .meta({
    id: "ResourcePolicyIdle",
    description:
      "Idle auto-pause at this scope (docs/dev/idle-and-limits.md); each field absent: the next scope's, then the default (60 min, 20–480, 5 %, 3).",
  });

const Gpus = z.number().min(0).max(100_000);
export const PolicyGuarantee = z
  .object({
    gpu_model: z.string().min(1).max(253).meta({ example: "NVIDIA-H100-80GB-HBM3" }),
    guaranteed_gpus: Gpus.meta({ description: "The guaranteed share of this model (a 1/4 slice counts 0.25)." }),
    borrowing_limit_gpus: Gpus.optional().meta({
      description: "At most this many GPUs beyond the guarantee, borrowed; absent: any idle capacity.",
    }),
    lending_limit_gpus: Gpus.optional().meta({
      description: "At most this much of the unused guarantee is lent to others; absent: all of it.",
    }),
  })
  .refine((g) => g.lending_limit_gpus === undefined || g.lending_limit_gpus <= g.guaranteed_gpus, {
    message: "lending_limit_gpus must not exceed guaranteed_gpus",
    path: ["lending_limit_gpus"],
  })
  .meta({ id: "ResourcePolicyGuarantee" });
export const PolicyFairShare = z
  .object({
    guarantees: z
      .array(PolicyGuarantee)
      .max(64)
      .refine((gs) => new Set(gs.map((g) => g.gpu_model)).size === gs.length, {
        message: "one guarantee per gpu_model",
      })
      .optional(),
    weight: z
      .number()
      .min(0.01)
      .max(1000)
      .optional()
      .meta({ description: "This scope's weight among its siblings; on the global policy, the default (1)." }),
    reclaim_grace_seconds: z
      .int()
      .min(0)
      .max(86_400)
      .optional()
      .meta({ description: "Warning before a borrowed session is paused; default 600, 0 allowed." }),
    min_runtime_seconds: z
      .int()
      .min(0)
      .max(86_400)
      .optional()
      .meta({ description: "No reclaim within this long after a session started; default 600." }),
    usage_half_life_hours: z
      .int()
      .min(1)
      .max(8_760)
      .optional()
      .meta({ description: "Past usage counts half after this long; default 168 (7 days)." }),
  })
  .meta({
    id: "ResourcePolicyFairShare",
    description: "Guaranteed and borrowed capacity, weights and reclaim at this scope (docs/dev/fair-share.md).",
  });

export const ResourcePolicy = z
  .object({
    name: z.string().meta({ example: "global" }),
    scope: z.object({
      kind: PolicyScopeKind,
      id: z.string().nullable(),
      organization: z.string().nullable().meta({ description: "A user scope's organization; null otherwise." }),
    }),
    limits: PolicyLimits,
    idle: PolicyIdle,
    fair_share: PolicyFairShare,
    allowed_offerings: z
      .array(z.string())
      .nullable()
      .meta({ description: "Offerings allowed at this scope; null: all." }),
    created_at: Created,
  })
  .meta({ id: "ResourcePolicy" });
export type ResourcePolicy = z.infer<typeof ResourcePolicy>;

const PolicyScope = z.object({
  kind: PolicyScopeKind,
  id: z.string().min(1).max(128).optional(),
  organization: z.string().min(1).max(128).optional(),
});
export const CreateResourcePolicyBody = z
  .object({
    name: ResourceName,
    scope: PolicyScope,
    limits: PolicyLimits.optional(),
    idle: PolicyIdle.optional(),
    fair_share: PolicyFairShare.optional(),
    allowed_offerings: z.array(ResourceName).max(256).optional(),
  })
  .meta({ id: "CreateResourcePolicyRequest" });
export const UpdateResourcePolicyBody = z
  .object({
    limits: PolicyLimits.optional().meta({ description: "Replaces the limits as a whole." }),
    idle: PolicyIdle.optional().meta({ description: "Replaces the idle settings as a whole." }),
    fair_share: PolicyFairShare.optional().meta({ description: "Replaces the fair-share settings as a whole." }),
    allowed_offerings: z
      .array(ResourceName)
      .max(256)
      .nullable()
      .optional()
      .meta({ description: "null: allow every offering." }),
  })
  .meta({ id: "UpdateResourcePolicyRequest" });
export const ListResourcePoliciesQuery = Page.extend({ scope: PolicyScopeKind.optional() });
