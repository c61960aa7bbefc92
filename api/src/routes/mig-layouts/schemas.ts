import { MIG_PROFILE_NAMES } from "@berth/crds";
import { z } from "zod";
import { ClusterIdParam } from "../clusters/schemas.ts";

const LayoutId = z.string().regex(/^mig_[a-z0-9]{20}$/, "a MIG layout id: mig_ and 20 lowercase letters or digits");

export const ClusterMigLayoutsParams = z.object({ clusterId: ClusterIdParam });
export const MigLayoutParams = z.object({ clusterId: ClusterIdParam, layoutId: LayoutId });

export const CreateMigLayoutBody = z
  .object({
    selector: z.string().min(1).max(1024).meta({
      description: "One label requirement picking the nodes: `key=value` or `key in (a,b)` (node_selector_invalid).",
      example: "berth.dev/mig=mixed",
    }),
    gpu_model: z.string().min(1).max(253).meta({ example: "NVIDIA-H100-80GB-HBM3" }),
    profiles: z
      .record(z.string().min(1).max(32), z.int().min(1).max(7))
      .refine((p) => Object.keys(p).length > 0 && Object.keys(p).length <= 16, {
        message: "name from 1 to 16 profiles",
        params: { code: "profiles_count" },
      })
      .meta({
        description:
          "Instances per card, by profile. Unknown profiles: mig_profile_unknown; another model's: mig_profile_not_for_model; more than a card holds (7 compute, 8 memory slices, a profile's own bound): mig_layout_overfilled.",
        example: { "3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2 },
        minProperties: 1,
        maxProperties: 16,
        propertyNames: { enum: [...MIG_PROFILE_NAMES] },
      }),
  })
  .strict();

export const MigLayout = z
  .object({
    id: z.string(),
    cluster_id: z.string(),
    gpu_model: z.string(),
    selector: z.string(),
    profiles: z.record(z.string(), z.int()),
    nodes: z
      .array(z.object({ name: z.string(), advertised: z.record(z.string(), z.int()) }))
      .meta({ description: "The model's nodes the selector picks now, with the MIG instances each advertises." }),
    created_at: z.string(),
  })
  .meta({ id: "MigLayout" });
export type MigLayout = z.infer<typeof MigLayout>;
