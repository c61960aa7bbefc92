import { z } from "zod";
import { Id, ResourceName, rule } from "../fields.ts";
import { defineKind, statusOf } from "../kind.ts";

export const PolicyScopeKind = z.enum(["global", "organization", "project"]);
export type PolicyScopeKind = z.infer<typeof PolicyScopeKind>;

const Count = z.int().min(0);

export const ResourcePolicySpec = z.object({
  /** The narrowest scope that sets a limit wins. */
  scope: rule(
    z.object({ kind: PolicyScopeKind, id: Id.optional() }),
    "self.kind == 'global' ? !has(self.id) : has(self.id)",
    "a global scope has no id; organization and project scopes need one",
    (s) => (s.kind === "global" ? s.id === undefined : s.id !== undefined),
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
