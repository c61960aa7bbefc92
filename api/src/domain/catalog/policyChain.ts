// Which ResourcePolicies bind a person at a place, narrowest first: their own in the organization (an
// approved quota request's), the project's, the organization's, the global one. Quotas, the idle rules and
// the effective limits all read limits through this one order.
import type { ResourcePolicy } from "@berth/crds";

/** Where a limit is looked up: the person (when known), their project and organization. */
export interface LimitSite {
  organizationId: string;
  projectId: string | null;
  /** The person the limit binds; their user-scoped policy in this organization comes first. */
  userId?: string | undefined;
}

/** The policies that apply at a site, narrowest first (user, project, organization, global). */
export function policiesAt(policies: readonly ResourcePolicy[], at: LimitSite): [ResourcePolicy, string][] {
  const user = at.userId
    ? policies.find(
        (p) =>
          p.spec.scope.kind === "user" &&
          p.spec.scope.id === at.userId &&
          p.spec.scope.organization === at.organizationId,
      )
    : undefined;
  const project = at.projectId
    ? policies.find((p) => p.spec.scope.kind === "project" && p.spec.scope.id === at.projectId)
    : undefined;
  const org = policies.find((p) => p.spec.scope.kind === "organization" && p.spec.scope.id === at.organizationId);
  const global = policies.find((p) => p.spec.scope.kind === "global");
  const out: [ResourcePolicy, string][] = [];
  if (user) out.push([user, `user ${at.userId}`]);
  if (project) out.push([project, `project ${at.projectId}`]);
  if (org) out.push([org, `organization ${at.organizationId}`]);
  if (global) out.push([global, "global"]);
  return out;
}
