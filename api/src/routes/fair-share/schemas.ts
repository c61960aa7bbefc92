import { z } from "zod";
import { Page } from "../../db/paging.ts";

const Gpus = z.number().meta({ description: "GPUs (card equivalents: a 1/4 slice counts 0.25)." });
export const ModelStanding = z
  .object({
    gpu_model: z.string(),
    guaranteed: Gpus,
    used: Gpus.meta({ description: "Held by its guaranteed sessions." }),
    borrowed: Gpus.meta({ description: "Held by its borrowed sessions, beyond the guarantee." }),
    lent: Gpus.meta({ description: "Of its unused guarantee, what others borrow now (within its lending limit)." }),
  })
  .meta({ id: "FairShareModel" });

const StandingFields = {
  id: z.string(),
  name: z.string(),
  weight: z.number(),
  fair_share: z.number().meta({ description: "Its weight's fraction among its siblings (0–1)." }),
  usage_share: z.number().meta({ description: "Its fraction of the siblings' decayed GPU usage (0–1)." }),
  weighted_share: z.number().meta({ description: "usage_share ÷ fair_share: above 1, more than its fair share." }),
  decayed_usage_gpu_hours: z.number().meta({
    description: "GPU-hours (card equivalents) decayed with the policy's half-life: what the fair order weighs.",
  }),
  models: z.array(ModelStanding),
};
export const UserStanding = z.object(StandingFields).meta({ id: "FairShareUser" });
export const ProjectStanding = z
  .object({
    ...StandingFields,
    users: z.array(UserStanding).meta({
      description: "Its users with decayed usage or a GPU held here; each weighs 1 (no user weights yet).",
    }),
  })
  .meta({ id: "FairShareProject" });
export const OrganizationStanding = z
  .object({ ...StandingFields, projects: z.array(ProjectStanding) })
  .meta({ id: "FairShareOrganization" });

export const FairShareView = z
  .object({
    as_of: z.string(),
    capacity: z.record(z.string(), z.number()).meta({ description: "Allocatable GPUs of the fleet per model." }),
    organizations: z.array(OrganizationStanding),
  })
  .meta({ id: "FairShare" });

export const FairShareQuery = z.object({ organization_id: z.string().min(1).max(128).optional() }).strict();

export const CapacityReclaim = z
  .object({
    id: z.string(),
    session_id: z.string().meta({ description: "The borrowed session reclaimed." }),
    organization_id: z.string(),
    project_id: z.string().nullable(),
    owner_id: z.string(),
    for_session_id: z.string().meta({ description: "The guaranteed session its GPUs went to." }),
    for_organization_id: z.string(),
    gpu_model: z.string(),
    gpus: z.number(),
    reason: z.string().meta({ description: "Why it was chosen (idle, over its fair share, priority, newest)." }),
    noticed_at: z.string(),
    pause_at: z.string(),
    paused_at: z.string().nullable(),
    resumed_at: z.string().nullable(),
    withdrawn_at: z
      .string()
      .nullable()
      .meta({ description: "Not needed after all (the guaranteed session found room)." }),
  })
  .meta({ id: "CapacityReclaim" });

export const ListReclaimsQuery = Page.extend({ organization_id: z.string().min(1).max(128).optional() });
