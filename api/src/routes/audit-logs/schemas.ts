import { z } from "zod";
import { Page } from "../../db/paging.ts";

const Timestamp = z.string().meta({ description: "RFC 3339, UTC." });
const Id = z.string().min(1).max(128);
const Instant = z.iso
  .datetime({ offset: true })
  .transform((s) => new Date(s))
  .meta({ description: "RFC 3339 date-time with a zone (e.g. 2026-11-26T00:00:00Z)." });

export const Outcome = z.enum(["success", "denied", "failed"]);
export const ActorKind = z.enum(["user", "operator", "system", "anonymous"]);

const filterFields = {
  from: Instant.optional().meta({ description: "Rows at or after this instant." }),
  to: Instant.optional().meta({ description: "Rows before this instant." }),
  actor: Id.optional().meta({ description: "The actor's id: a user id, or a cluster id for an operator." }),
  actor_kind: ActorKind.optional(),
  action: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[a-zA-Z0-9_.:-]+\*?$/, "letters, digits, . _ : - and an optional trailing * for a prefix")
    .optional()
    .meta({ description: "An action (session.create) or a prefix ending in * (session.*)." }),
  resource_type: z.string().min(1).max(64).optional().meta({ description: "The target's kind, e.g. session." }),
  resource_id: Id.optional().meta({ description: "The target's id." }),
  organization: Id.optional().meta({ description: "Only this organization (within your scope)." }),
  project: Id.optional(),
  cluster: Id.optional(),
  outcome: Outcome.optional(),
};

type Range = { from?: Date | undefined; to?: Date | undefined };
const ordered = (q: Range, ctx: z.RefinementCtx) => {
  if (q.from && q.to && q.from >= q.to)
    ctx.addIssue({ code: "custom", path: ["to"], message: "must be after from (the range is inverted or empty)" });
};

export const ListAuditLogsQuery = Page.extend(filterFields).strict().superRefine(ordered);
export type ListAuditLogsQuery = z.output<typeof ListAuditLogsQuery>;

export const ExportAuditLogsQuery = z
  .object({
    ...filterFields,
    from: Instant.meta({ description: "Required: rows at or after this instant." }),
    to: Instant.meta({ description: "Required: rows before this instant." }),
  })
  .strict()
  .superRefine(ordered);
export type ExportAuditLogsQuery = z.output<typeof ExportAuditLogsQuery>;

export const AuditLogEntry = z
  .object({
    id: z.string().meta({ description: "The row's place in the chain (seq)." }),
    at: Timestamp,
    actor: z.object({
      kind: ActorKind,
      id: z
        .string()
        .nullable()
        .meta({ description: "A user id; for an operator the cluster id; null for the system." }),
      reason: z.string().nullable().meta({ description: "Why the system acted (billing, retention, …)." }),
    }),
    action: z.string(),
    outcome: Outcome,
    status: z.number().int().nullable(),
    resource: z.object({ type: z.string().nullable(), id: z.string().nullable() }),
    organization_id: z.string().nullable(),
    project_id: z.string().nullable(),
    cluster_id: z.string().nullable(),
    request_id: z.string().nullable(),
    source_ip: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
    diff: z.record(z.string(), z.unknown()).nullable().meta({ description: "{before?, after?}, secrets redacted." }),
    hash: z.string(),
    prev_hash: z.string().nullable(),
  })
  .meta({ id: "AuditLogEntry" });
export type AuditLogEntry = z.infer<typeof AuditLogEntry>;

export const AuditChainVerdict = z
  .object({
    valid: z.boolean(),
    checked: z.number().int(),
    first_id: z.string().nullable().meta({ description: "The oldest kept row (older ones were purged by retention)." }),
    last_id: z.string().nullable(),
    first_broken: z
      .object({
        id: z.string(),
        problem: z.enum(["hash", "link", "gap"]).meta({
          description:
            "hash: the row's content no longer matches its hash; link: it does not chain to the row before; gap: rows are missing before it.",
        }),
      })
      .nullable(),
  })
  .meta({ id: "AuditChainVerdict" });
