// The control plane's grant on a GPU cluster (controlPlaneRbac, api/src/rbac.ts) as the verbs the
// registration probe asks about, one SelfSubjectAccessReview each, and as an administrator reads them.

import type { ControlPlaneRbac, RbacRule } from "../../rbac.ts";

/** One verb on one resource, as a SelfSubjectAccessReview asks it. */
export interface Permission {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
}

export function permissionsOf(rbac: ControlPlaneRbac): Permission[] {
  const out: Permission[] = [];
  const add = (rule: RbacRule, namespace?: string) => {
    for (const group of rule.apiGroups)
      for (const res of rule.resources)
        for (const verb of rule.verbs) {
          const [resource = res, subresource] = res.split("/");
          out.push({
            verb,
            group,
            resource,
            ...(subresource ? { subresource } : {}),
            ...(namespace ? { namespace } : {}),
          });
        }
  };
  for (const r of rbac.clusterRules) add(r);
  for (const n of rbac.namespaceRules) for (const r of n.rules) add(r, n.namespace);
  return out;
}

/** "create pods/eviction in berth-sessions", "patch nodes" — what an administrator reads in details. */
export function describePermission(p: Permission): string {
  const res = `${p.subresource ? `${p.resource}/${p.subresource}` : p.resource}${p.group ? `.${p.group}` : ""}`;
  return `${p.verb} ${res}${p.namespace ? ` in ${p.namespace}` : " (cluster-wide)"}`;
}
