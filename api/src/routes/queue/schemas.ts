import { z } from "zod";
import { Page } from "../../db/paging.ts";
import { Session } from "../sessions/schemas.ts";

const Minutes = z
  .number()
  .nullable()
  .meta({ description: "Minutes from as_of; null: cannot start while the reason holds (∞)." });
export const QueueEta = z
  .object({
    as_of: z.string().meta({ description: "The state the estimate was made from (RFC 3339)." }),
    p50_minutes: Minutes,
    p90_minutes: Minutes,
    per_cluster: z.array(
      z.object({
        cluster_id: z.string(),
        share: z.number().meta({ description: "Share of the simulated futures in which it starts there." }),
        p50_minutes: Minutes,
        p90_minutes: Minutes,
      }),
    ),
    method: z.enum(["simulation", "throughput", "never"]).meta({
      description:
        "simulation: placement replayed forward over lengths learned from finished runs; throughput: queue depth ÷ recent admission rate (too little history); never: cannot start while the reason holds.",
    }),
    reason: z.string().meta({ description: "Placement's reason for the wait now (NoCapacity, PinnedClusterFull, …)." }),
    message: z.string().meta({ example: "starts in about 25 min (10–60 min)" }),
    hint: z
      .object({ label: z.string(), p50_minutes: Minutes, message: z.string() })
      .nullable()
      .meta({ description: "A shape that would likely start sooner (a smaller tier, another cluster)." }),
  })
  .meta({ id: "QueueEta", description: "When the session is likely to start (docs/dev/fair-share.md)." });

export const QueueEntry = z
  .object({
    session: Session,
    position: z.number().int().meta({
      description:
        "1-based among the sessions waiting for the same GPU model, in placement order (priority, then age).",
    }),
    reason: z.string().meta({ description: "Why it waits (no free GPU of its model, its pinned cluster is full, …)." }),
    waiting_since: z.string(),
    eta: QueueEta.nullable().meta({
      description: "null when no estimate could be made (the fleet could not be read).",
    }),
  })
  .meta({ id: "QueueEntry" });

export const ListQueueQuery = Page.extend({
  scope: z
    .enum(["mine", "all"])
    .default("mine")
    .meta({ description: "As for GET /api/v1/sessions: beyond your role, your role's scope." }),
  gpu_model: z.string().max(253).optional(),
  cluster_id: z.string().max(64).optional().meta({ description: "Sessions pinned to this cluster." }),
});

export const PriorityBody = z
  .object({
    priority: z
      .number()
      .int()
      .min(-1000)
      .max(1000)
      .meta({ description: "Higher goes first; ties go to the older session." }),
  })
  .strict()
  .meta({ id: "QueuePriority" });
