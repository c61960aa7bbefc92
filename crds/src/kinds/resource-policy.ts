import { z } from "zod";
import { Id, ResourceName, rule } from "../fields.ts";
import { defineKind, statusOf } from "../kind.ts";

/** `user`: one person inside one organization (an approved quota-increase request writes one). */
export const PolicyScopeKind = z.enum(["global", "organization", "project", "user"]);
export type PolicyScopeKind = z.infer<typeof PolicyScopeKind>;

const Count = z.int().min(0);

/** GPUs of one model, whole cards or a share of one (a 1/4 slice counts 0.25). */
const Gpus = z.number().min(0).max(100_000);

/**
 * One GPU model's guarantee at this scope (docs/dev/fair-share.md). `gpus` is the guaranteed share;
 * `borrowingLimit` caps what may be used beyond it (absent: any idle capacity); `lendingLimit` caps how
 * much of the unused guarantee others may borrow (absent: all of it).
 */
export const GpuGuarantee = rule(
  z.object({
    gpuModel: z.string().min(1).max(253),
    gpus: Gpus,
    borrowingLimit: Gpus.optional(),
    lendingLimit: Gpus.optional(),
  }),
  "!has(self.lendingLimit) || self.lendingLimit <= self.gpus",
  "lendingLimit must not exceed gpus",
  (g) => g.lendingLimit === undefined || g.lendingLimit <= g.gpus,
);
export type GpuGuarantee = z.infer<typeof GpuGuarantee>;

/** Fair-share settings at this scope; each absent field: the next wider scope's, then the default. */
export const FairShareSpec = z.object({
  guarantees: z.array(GpuGuarantee).max(64).optional(),
  /** This scope's weight among its siblings (organization, project or user); the global one: the default. */
  weight: z.number().min(0.01).max(1000).optional(),
  /** Warning before a borrowed session is paused for a guaranteed request; default 600, 0 allowed. */
  reclaimGraceSeconds: z.int().min(0).max(86_400).optional(),
  /** A borrowed session is never reclaimed within this long after it started; default 600. */
  minRuntimeSeconds: z.int().min(0).max(86_400).optional(),
  /** Past usage counts half after this long; default 168 (7 days). */
  usageHalfLifeHours: z.int().min(1).max(8_760).optional(),
});
export type FairShareSpec = z.infer<typeof FairShareSpec>;

export const ResourcePolicySpec = z.object({
  /**
   * The narrowest scope that sets a limit wins: user, project, organization, global. A user scope names
   * the organization it applies in, so one organization's administrators cannot raise a person's limits
   * in another.
   */
  scope: rule(
    z.object({ kind: PolicyScopeKind, id: Id.optional(), organization: Id.optional() }),
    "(self.kind == 'global' ? !has(self.id) : has(self.id)) && (self.kind == 'user' ? has(self.organization) : !has(self.organization))",
    "a global scope has no id; the others need one; a user scope (and only it) names its organization",
    (s) =>
      (s.kind === "global" ? s.id === undefined : s.id !== undefined) &&
      (s.kind === "user" ? s.organization !== undefined : s.organization === undefined),
  ),
  /** Absent: no limit at this scope. */
  limits: z
    .object({
      maxGpusPerUser: Count.optional(),
      maxGpusPerProject: Count.optional(),
      maxGpusPerOrganization: Count.optional(),
      maxConcurrentSessionsPerUser: Count.optional(),
      /** The longest a session runs before it is paused (MaxRuntime); absent everywhere: 24. */
      maxSessionHours: Count.optional(),
      maxVolumeGbPerUser: Count.optional(),
      /** Gigabytes of volumes a project may own, all its volumes together. */
      maxVolumeGbPerProject: Count.optional(),
      /** Highest priority a member may give a session; admins are not bound by it. */
      maxPriority: z.int32().optional(),
    })
    .default({}),
  /**
   * Idle auto-pause (docs/dev/idle-and-limits.md). Each field on its own: the narrowest scope that sets it
   * wins, then the built-in default (60 min, bounds 20–480 min, 5 %, 3 keep-runnings). `timeoutMinutes`
   * 0 turns idle pausing off for the scope.
   */
  idle: rule(
    z
      .object({
        timeoutMinutes: z.int().min(0).max(10_080).optional(),
        /** Bounds of what a session may ask for at creation. */
        minTimeoutMinutes: z.int().min(10).max(10_080).optional(),
        maxTimeoutMinutes: z.int().min(10).max(10_080).optional(),
        /** GPU utilisation under this (per container, else per card) counts as idle. */
        gpuUtilizationPercent: z.number().min(0).max(100).optional(),
        /** How often the owner may say "keep running" in one run period. */
        keepRunningMax: z.int().min(0).max(100).optional(),
      })
      .default({}),
    "!has(self.minTimeoutMinutes) || !has(self.maxTimeoutMinutes) || self.minTimeoutMinutes <= self.maxTimeoutMinutes",
    "minTimeoutMinutes must not exceed maxTimeoutMinutes",
    (s) =>
      s.minTimeoutMinutes === undefined ||
      s.maxTimeoutMinutes === undefined ||
      s.minTimeoutMinutes <= s.maxTimeoutMinutes,
  ),
  /** Guaranteed and borrowed capacity, weights, reclaim (docs/dev/fair-share.md). */
  fairShare: FairShareSpec.optional(),
  /** Offerings allowed at this scope; absent: all. */
  allowedOfferings: z.array(ResourceName).max(256).optional(),
});
export type ResourcePolicySpec = z.infer<typeof ResourcePolicySpec>;

export const ResourcePolicyStatus = statusOf({});
export type ResourcePolicyStatus = z.infer<typeof ResourcePolicyStatus>;

export const ResourcePolicyKind = defineKind({
  kind: "ResourcePolicy",
  plural: "resourcepolicies",
  shortNames: ["rpol"],
  namespaced: false,
  description: "Limits on GPUs, sessions and storage for everyone, an organization or a project.",
  spec: ResourcePolicySpec,
  status: ResourcePolicyStatus,
  printerColumns: [
    { name: "Scope", type: "string", jsonPath: ".spec.scope.kind" },
    { name: "Scope ID", type: "string", jsonPath: ".spec.scope.id" },
    { name: "GPUs/User", type: "integer", jsonPath: ".spec.limits.maxGpusPerUser" },
    { name: "Sessions/User", type: "integer", jsonPath: ".spec.limits.maxConcurrentSessionsPerUser" },
  ],
});
export const ResourcePolicy = ResourcePolicyKind.schema;
export type ResourcePolicy = z.infer<typeof ResourcePolicy>;
