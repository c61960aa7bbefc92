import { z } from "zod";
import { Id, ResourceName, rule } from "../fields.ts";
import { defineKind, statusOf } from "../kind.ts";

/** `user`: one person inside one organization (an approved quota-increase request writes one). */
export const PolicyScopeKind = z.enum(["global", "organization", "project", "user"]);
export type PolicyScopeKind = z.infer<typeof PolicyScopeKind>;

const Count = z.int().min(0);

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
      maxSessionHours: Count.optional(),
      maxVolumeGbPerUser: Count.optional(),
      /** Gigabytes of volumes a project may own, all its volumes together. */
      maxVolumeGbPerProject: Count.optional(),
      /** Highest priority a member may give a session; admins are not bound by it. */
      maxPriority: z.int32().optional(),
    })
    .default({}),
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
