// Wire shapes of quota-increase requests and effective limits (under /api/v1/resource-policies).
import { z } from "zod";
import { Page } from "../../db/paging.ts";
import { ALL_LIMITS, REQUESTABLE_LIMITS } from "../../domain/quotas/limits.ts";

const Timestamp = z.string().meta({ description: "RFC 3339, UTC." });
const Id = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_:-]+$/);
const Count = z.int().min(0).max(1_000_000);
const Note = z.string().regex(/\S/, "not only spaces").trim().min(1).max(1000);

export const LimitName = z.enum(ALL_LIMITS).meta({ id: "PolicyLimitName" });
export const RequestableLimit = z.enum(REQUESTABLE_LIMITS).meta({ id: "RequestableLimitName" });
export const RequestScope = z
  .enum(["user", "project"])
  .meta({ description: "user: your own limits in the organization; project: the project's shared limits." });
export const RequestStatus = z.enum(["pending", "approved", "partially_approved", "denied", "cancelled"]);

const LimitValues = z
  .partialRecord(RequestableLimit, Count)
  .meta({ id: "QuotaLimitValues", description: "Limit name to its new value.", example: { max_gpus_per_user: 8 } });

export const RequestParams = z.object({ requestId: Id });

export const CreateQuotaRequestBody = z
  .strictObject({
    organization_id: Id,
    project_id: Id.optional().meta({ description: "Required for scope project; for scope user, the context." }),
    scope: RequestScope.default("user"),
    limits: LimitValues,
    reason: z.string().regex(/\S/, "not only spaces").trim().min(1).max(2000),
  })
  .meta({ id: "CreateQuotaRequest" });

export const ApproveQuotaRequestBody = z
  .strictObject({
    limits: LimitValues.optional().meta({
      description: "What is granted, each at most what was asked; omitted: all of it. Less: partially approved.",
    }),
    note: Note.optional(),
  })
  .meta({ id: "ApproveQuotaRequest" });

export const DenyQuotaRequestBody = z.strictObject({ note: Note.optional() }).meta({ id: "DenyQuotaRequest" });

export const ListQuotaRequestsQuery = Page.extend({
  box: z
    .enum(["mine", "incoming"])
    .optional()
    .meta({ description: "mine: asked by you; incoming: asked by others, for you to decide. Omitted: both." }),
  status: RequestStatus.optional(),
  organization_id: Id.optional(),
});

export const QuotaRequest = z
  .object({
    id: z.string().meta({ example: "qrq_0q4w7e2r9t1y6u3i8o5p" }),
    organization_id: z.string(),
    project_id: z.string().nullable(),
    scope: RequestScope,
    requester_id: z.string(),
    requester_email: z
      .string()
      .nullable()
      .meta({ description: "Who asks, for those who decide; null in the answer to a write." }),
    asked: z.record(z.string(), z.number()),
    current: z
      .record(z.string(), z.number().nullable())
      .meta({ description: "The limits when asked (null: none applied)." }),
    reason: z.string(),
    status: RequestStatus,
    granted: z.record(z.string(), z.number()).nullable(),
    policy: z.string().nullable().meta({ description: "The ResourcePolicy the approval wrote." }),
    decided_by: z.string().nullable(),
    decision_note: z.string().nullable(),
    created_at: Timestamp,
    decided_at: Timestamp.nullable(),
    can_decide: z.boolean().meta({ description: "Whether the caller may approve or deny it now." }),
  })
  .meta({ id: "QuotaRequest" });
export type QuotaRequest = z.infer<typeof QuotaRequest>;

export const EffectiveQuery = z.strictObject({
  organization_id: Id.optional().meta({ description: "Required when you belong to several organizations." }),
  project_id: Id.optional(),
});

export const EffectiveLimits = z
  .object({
    user_id: z.string(),
    organization_id: z.string(),
    project_id: z.string().nullable(),
    limits: z.array(
      z.object({
        name: LimitName,
        value: z.number().nullable().meta({ description: "null: no policy sets it." }),
        used: z.number().nullable().meta({ description: "null: not a count (hours per session, priority)." }),
        headroom: z.number().nullable(),
        policy: z.string().nullable().meta({ description: "The ResourcePolicy the value comes from." }),
        scope: z.string().nullable().meta({ example: "organization org_0q4w7e2r9t1y6u3i8o5p" }),
        requestable: RequestScope.nullable().meta({ description: "The scope a request to raise it takes." }),
      }),
    ),
    allowed_offerings: z.object({ value: z.array(z.string()).nullable(), policy: z.string().nullable() }),
    idle: z
      .object({
        timeout_minutes: z
          .number()
          .int()
          .meta({ description: "The idle timeout a session gets unless it asks; 0: idle pausing off." }),
        min_timeout_minutes: z
          .number()
          .int()
          .meta({ description: "The shortest idle_timeout_minutes a session may ask for." }),
        max_timeout_minutes: z
          .number()
          .int()
          .meta({ description: "The longest idle_timeout_minutes a session may ask for." }),
        gpu_utilization_percent: z.number().meta({ description: "GPU utilisation under this counts as idle." }),
        keep_running_max: z.number().int().meta({ description: "Keep-running extensions per run period." }),
        max_runtime_minutes: z
          .number()
          .int()
          .meta({ description: "The maximum running time; a session may ask for less (max_runtime_minutes)." }),
      })
      .meta({
        description:
          "The idle and running-time rules (organization and project scopes) a session created here runs under.",
      }),
  })
  .meta({ id: "EffectiveLimits" });
