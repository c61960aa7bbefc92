import { z } from "zod";
import { Page } from "../../db/paging.ts";
import { Session } from "../sessions/schemas.ts";

export const QueueEntry = z
  .object({
    session: Session,
    position: z.number().int().meta({
      description:
        "1-based among the sessions waiting for the same GPU model, in placement order (priority, then age).",
    }),
    reason: z.string().meta({ description: "Why it waits (no free GPU of its model, its pinned cluster is full, …)." }),
    waiting_since: z.string(),
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
