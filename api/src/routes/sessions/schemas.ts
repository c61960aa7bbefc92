import { SessionPhase as CrdSessionPhase, mountPathProblem, SESSION_ID } from "@berth/crds";
import { z } from "zod";
import { Page } from "../../db/paging.ts";

const Timestamp = z.string().meta({ description: "RFC 3339, UTC." });
const ResourceName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, "a catalog object's name");

export const SessionIdParam = z
  .string()
  .regex(SESSION_ID, "a session id: ses_ followed by 20 lowercase letters and digits");
export const SessionParams = z.object({ sessionId: SessionIdParam });

// The resource model's phases (crds), described for the contract.
export const SessionPhase = CrdSessionPhase.meta({
  id: "SessionPhase",
  description:
    "Pending: accepted, not yet placed. Queued: waiting for a GPU (see queue). Starting: placed, pod not ready. Running. Pausing: pod being deleted. Paused: no pod, no GPU, volumes kept. Resuming: placed again after a pause. Restarting: pod being replaced. Terminating. Terminated. Failed: the pod could not run (e.g. image pull); its GPU is released. Unknown: its cluster stopped reporting.",
});
export const SessionAction = z.enum(["pause", "resume", "restart", "terminate"]).meta({ id: "SessionAction" });

export const SessionCondition = z
  .object({
    type: z.string().meta({ description: "Scheduled, Dispatched, Ready, Billable." }),
    status: z.enum(["True", "False", "Unknown"]),
    reason: z.string().meta({
      description:
        "A stable CamelCase constant (PodRunning, NoCapacity, PinnedClusterFull, NodeLost, ImagePullFailed, …).",
    }),
    message: z.string(),
    last_transition_time: Timestamp,
  })
  .meta({ id: "SessionCondition" });

export const CapacityClass = z.enum(["guaranteed", "borrowed"]).meta({
  id: "CapacityClass",
  description:
    "guaranteed: within the organization's (and project's) guaranteed GPUs, never reclaimed (the default). borrowed: idle capacity beyond it, at the offering's borrowed rate, paused after a warning when a guaranteed session needs it (docs/dev/fair-share.md).",
});

export const ReclaimNotice = z
  .object({
    message: z.string(),
    pending: z
      .object({
        notice_at: Timestamp,
        pause_at: Timestamp.meta({ description: "When it is (or was) paused for the guaranteed session." }),
        for_session_id: z.string(),
        reason: z.string(),
        paused_at: Timestamp.nullable(),
      })
      .nullable()
      .meta({ description: "While a reclaim is under way: the warning and when the pause comes." }),
  })
  .meta({ id: "ReclaimNotice" });

export const Session = z
  .object({
    id: z.string().meta({ example: "ses_4k2m9x0c7v5b3n6q8w1e" }),
    name: z.string().nullable().meta({ description: "Display name given at creation." }),
    resource_name: z
      .string()
      .meta({ description: "The Session resource's name: {cr} in the connect paths /proxy/{cr}/…" }),
    namespace: z.string().meta({ description: "The organization's namespace in the management cluster." }),
    owner_id: z.string(),
    organization_id: z.string(),
    project_id: z.string().nullable(),
    offering: z.string(),
    preset: z.string(),
    image: z.string(),
    gpu_model: z.string(),
    gpu_count: z.number().int(),
    gpu_fraction: z
      .string()
      .meta({ description: '"1" for whole cards, else the slice of one card: "1/2" to "1/32".', example: "1/8" }),
    gpu_slice_memory_mib: z
      .number()
      .int()
      .nullable()
      .meta({ description: "GPU memory the slice guarantees (MiB); null for whole cards." }),
    gpu_mig_profile: z
      .string()
      .nullable()
      .meta({ description: "The MIG profile the session holds one instance of; null otherwise.", example: "3g.40gb" }),
    gpu_occupancy: z.number().meta({
      description: "GPUs quotas and policies count: whole cards, or the slice's share (a 1/4 slice is 0.25).",
    }),
    gpu_cards: z.array(z.string()).nullable().meta({
      description: "UUIDs of the cards the session holds now (clusters with a GPU sharing layer); null otherwise.",
    }),
    hourly_credit_rate: z.string().meta({ description: "Minor units per hour (1 credit = 1,000,000), at creation." }),
    cluster_pin: z.string().nullable().meta({ description: "The cluster it must run on, when pinned." }),
    cluster_id: z
      .string()
      .nullable()
      .meta({ description: "Where it runs now (the last cluster for Paused and Terminated sessions)." }),
    node: z.string().nullable(),
    phase: SessionPhase,
    desired_state: z
      .enum(["Running", "Paused", "Terminated"])
      .meta({ description: "What was asked last; the phase moves towards it." }),
    priority: z.number().int(),
    queue: z
      .object({ position: z.number().int(), reason: z.string() })
      .nullable()
      .meta({ description: "While Queued: 1-based position among sessions waiting for the same GPU model, and why." }),
    reason: z.string().nullable().meta({ description: "Why it is where it is: the leading condition's reason." }),
    message: z.string().nullable(),
    conditions: z.array(SessionCondition).optional().meta({ description: "Detail only." }),
    connect_paths: z.object({ lab: z.string(), terminal: z.string(), code: z.string() }).nullable().meta({
      description:
        "While Running: paths under the cluster's session_domain. Get usable links from GET /api/v1/sessions/{id}/connect.",
    }),
    restarts: z.number().int().meta({
      description:
        "Restarts begun: a restart counts once the worker starts replacing the pod (phase Restarting), not when it is asked for.",
    }),
    allowed_actions: z
      .array(SessionAction)
      .meta({ description: "Actions the session's phase allows now (others answer 409 invalid_session_state)." }),
    created_at: Timestamp,
    updated_at: Timestamp,
    queued_at: Timestamp.nullable(),
    scheduled_at: Timestamp.nullable(),
    started_at: Timestamp.nullable(),
    paused_at: Timestamp.nullable(),
    terminated_at: Timestamp.nullable(),
    idle_warning: z.object({ since: Timestamp, deadline: Timestamp }).nullable().meta({
      description:
        "While an idle warning is out: idle since when, and when it will be paused (reason Idle) unless it is used or kept running (POST …/keep-running).",
    }),
    runtime_warning: z
      .object({ deadline: Timestamp })
      .nullable()
      .meta({ description: "While a time-limit warning is out: when it will be paused (reason MaxRuntime)." }),
    capacity_class: CapacityClass,
    rate_multiplier: z.number().meta({
      description: "The share of the offering's rate it pays: the borrowed rate multiplier when borrowed, else 1.",
    }),
    reclaim_notice: ReclaimNotice.nullable().meta({ description: "Borrowed sessions only." }),
  })
  .meta({ id: "Session" });

export const CreateSessionBody = z
  .object({
    offering: ResourceName.meta({ description: "An Offering's name (GET /api/v1/offerings).", example: "h100" }),
    preset: ResourceName.meta({ description: "A ResourcePreset's name.", example: "gpu-small" }),
    image: ResourceName.meta({
      description: "An Image's name (public, or your own private image).",
      example: "jupyterlab",
    }),
    name: z
      .string()
      .regex(/\S/, "not only spaces")
      .trim()
      .min(1)
      .max(128)
      .optional()
      .meta({ description: "Display name." }),
    cluster_id: z
      .string()
      .regex(/^clu_[a-z0-9]{1,59}$/)
      .optional()
      .meta({ description: "Pin: run only on this cluster, and wait there when it is full." }),
    organization_id: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .meta({ description: "Required when you belong to several organizations and give no project." }),
    project_id: z.string().min(1).max(128).optional(),
    priority: z.number().int().min(-1000).max(1000).optional().meta({
      description: "Queue priority (higher first). Members may not exceed the policy's maxPriority (default 0).",
    }),
    volumes: z
      .array(
        z.object({
          volume: z
            .union([z.string().regex(/^vol_[a-z0-9]{20}$/), ResourceName])
            .meta({ description: "A volume you may use: its id (vol_…) or its resource name." }),
          mount_path: z
            .string()
            .max(4096)
            .superRefine((p, ctx) => {
              const problem = mountPathProblem(p);
              if (problem) ctx.addIssue({ code: "custom", message: `the mount path ${problem}` });
            })
            .optional()
            .meta({ description: "Absolute, without . or .., not over a system path (/etc, /usr, /proc, …)." }),
          read_only: z.boolean().optional(),
        }),
      )
      .max(16)
      .optional(),
    idle_timeout_minutes: z.number().int().min(0).max(10_080).optional().meta({
      description:
        "Pause the session after this long idle (GPU under the threshold, no user traffic, no busy kernel). Within the resource policy's bounds (default 20–480), else 400 `idle_timeout_out_of_bounds`. Default: the policy's (60).",
    }),
    max_runtime_minutes: z.number().int().min(1).max(525_600).optional().meta({
      description:
        "Pause the session after running this long. At most the policy's maximum running time (default 24 h), else 400 `max_runtime_out_of_bounds`.",
    }),
    capacity_class: CapacityClass.optional().meta({
      description:
        'Default guaranteed. "borrowed" opts in to idle capacity beyond your guarantee, at the borrowed rate, reclaimable after a warning.',
    }),
  })
  .strict()
  .meta({ id: "CreateSession" });

export const ListSessionsQuery = Page.extend({
  scope: z.enum(["mine", "all"]).default("mine").meta({
    description:
      "mine: your sessions. all: every session your role reaches (answered with your role's scope, never 403).",
  }),
  phase: z
    .union([SessionPhase, z.array(SessionPhase)])
    .optional()
    .transform((v) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]))
    .meta({ description: "Only these phases (repeat the parameter for several)." }),
  cluster_id: z.string().max(64).optional(),
  organization_id: z.string().max(128).optional(),
  project_id: z.string().max(128).optional(),
});

export const BulkTerminateBody = z
  .object({ ids: z.array(SessionIdParam).min(1).max(100) })
  .strict()
  .meta({ id: "BulkTerminate" });
export const BulkTerminateResult = z
  .object({
    results: z.array(
      z.object({
        id: z.string(),
        status: z.enum(["accepted", "refused"]),
        session: Session.optional(),
        error: z
          .object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()) })
          .optional(),
      }),
    ),
  })
  .meta({ id: "BulkTerminateResult" });

export const GpuAvailability = z
  .object({
    clusters: z.array(
      z.object({
        cluster_id: z.string(),
        cluster_name: z.string(),
        gpu_model: z.string(),
        total: z.number().int().meta({ description: "Allocatable GPUs on ready, schedulable nodes." }),
        in_use: z.number().int(),
        free: z.number().int(),
        nodes: z.number().int(),
        largest_node: z
          .number()
          .int()
          .meta({ description: "The most GPUs one node offers: the largest session that fits." }),
        sharing: z.boolean().meta({ description: "Its nodes run a GPU sharing layer: cards take slices." }),
        whole_free: z
          .number()
          .int()
          .meta({ description: "Whole cards nothing holds (with a sharing layer: no slice either)." }),
        slices_free: z.record(z.string(), z.number().int()).meta({
          description:
            'With a sharing layer: per fraction ("1/2" to "1/32"), how many more slices fit, card by card; empty otherwise.',
          example: { "1/2": 3, "1/4": 7, "1/8": 15 },
        }),
        mig_free: z.record(z.string(), z.number().int()).meta({
          description:
            "MIG instances free per profile, on nodes an administrator marked with a MIG layout that advertise them; empty without.",
          example: { "1g.10gb": 5, "3g.40gb": 1 },
        }),
      }),
    ),
    models: z.array(
      z.object({ gpu_model: z.string(), total: z.number().int(), free: z.number().int(), queued: z.number().int() }),
    ),
  })
  .meta({ id: "GpuAvailability" });

export const PreviewCostBody = z
  .object({
    offering: ResourceName,
    preset: ResourceName.optional().meta({ description: "Its GPU count overrides the offering's." }),
    duration_seconds: z
      .number()
      .int()
      .min(1)
      .max(31 * 24 * 3600)
      .default(3600),
    organization_id: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .meta({ description: "As on create: needed when you belong to several organizations and give no project." }),
    project_id: z.string().min(1).max(128).optional().meta({ description: "As on create." }),
    volumes: z
      .array(
        z
          .union([z.string().regex(/^vol_[a-z0-9]{20}$/), ResourceName])
          .meta({ description: "A volume you may use: its id (vol_…) or its resource name." }),
      )
      .max(16)
      .optional()
      .meta({
        description:
          "Volumes the session would mount: their storage is priced too (billed while they exist, whether sessions run or not).",
      }),
    capacity_class: CapacityClass.optional().meta({ description: "As on create; default guaranteed." }),
  })
  .strict()
  .meta({ id: "PreviewCost" });

export const StartRefusal = z
  .object({
    code: z.string().meta({ description: "The error code create would answer, e.g. `quota_exceeded`." }),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).meta({ description: "The same details create's error would carry." }),
  })
  .meta({
    id: "StartRefusal",
    description:
      "What `POST /api/v1/sessions` would refuse with now: the `error` object of its envelope, less `request_id` and `timestamp`.",
  });

export const CostPreview = z
  .object({
    offering: z.string(),
    gpu_model: z.string(),
    gpu_count: z.number().int(),
    hourly_rate: z.string().meta({
      description:
        "Minor units per hour for this session (1 credit = 1,000,000), rounded up to a unit; charging uses the exact rate.",
    }),
    hourly_rate_credits: z.string().meta({ description: "The same in credits, as a decimal string." }),
    duration_seconds: z.number().int(),
    cost: z.string().meta({ description: "Minor units for the duration at the exact rate, rounded up." }),
    cost_credits: z.string(),
    gpu_available_now: z
      .boolean()
      .meta({ description: "Some cluster has a free GPU of the model on one node right now." }),
    organization_id: z
      .string()
      .nullable()
      .meta({ description: "The organization the session would belong to; null when it cannot be told." }),
    project_id: z.string().nullable(),
    can_start: z.boolean().meta({
      description: "Creating this session now would be accepted (it may still wait in the queue for a GPU).",
    }),
    refusal: StartRefusal.optional().meta({ description: "Present when `can_start` is false." }),
    capacity_class: CapacityClass.meta({ description: "The class priced: which rate applies." }),
    rate_multiplier: z.number().meta({ description: "hourly_rate ÷ full_hourly_rate: the borrowed multiplier, or 1." }),
    full_hourly_rate: z.string().meta({ description: "Minor units per hour at the guaranteed (full) rate." }),
    reclaim_terms: z
      .object({
        grace_seconds: z.number().int().meta({ description: "Warning before a reclaim pauses the session." }),
        min_runtime_seconds: z.number().int().meta({ description: "Never reclaimed within this long of starting." }),
        message: z.string(),
      })
      .nullable()
      .meta({ description: "Borrowed only: what the person agrees to." }),
    storage: z
      .object({
        volumes: z.array(z.object({ volume: z.string(), size_gb: z.number().int() })),
        size_gb: z.number().int(),
        gb_hour_rate: z.string().meta({ description: "Minor units per GB-hour of provisioned size." }),
        hourly_rate: z.string().meta({ description: "Minor units per hour for these volumes, rounded up." }),
        cost: z.string().meta({ description: "Minor units for the duration, rounded up." }),
      })
      .meta({
        description:
          "The volumes named in the request: storage is billed per GB-hour while a volume exists, whether sessions run or not.",
      }),
    total_cost: z.string().meta({ description: "cost + storage.cost, in minor units." }),
    total_cost_credits: z.string(),
  })
  .meta({ id: "CostPreview" });

export const SessionResource = z
  .object({
    resource: z
      .record(z.string(), z.unknown())
      .meta({ description: "The Session object as the management cluster stores it (managedFields left out)." }),
    yaml: z.string().meta({ description: "The same object as YAML, as `kubectl get -o yaml` prints it." }),
  })
  .meta({ id: "SessionResource" });

export const KubeEvents = z
  .object({
    data: z.array(
      z.object({
        type: z.string(),
        reason: z.string(),
        message: z.string(),
        count: z.number().int(),
        first_timestamp: z.string().nullable(),
        last_timestamp: z.string().nullable(),
        source: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: "SessionKubernetesEvents" });
