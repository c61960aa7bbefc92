// What the control plane does on a GPU cluster with its registered credential, as RBAC rules. One list
// feeds three things: the registration probe (one SelfSubjectAccessReview per verb), the least-privilege
// credential the test bed and `npm start` mint, and the documentation of what to grant.
//
// Not here: creating namespaces (the operator's install creates `berth-system` and the session
// namespace), anything in `berth-system` (the operator token is handed to the administrator, not written
// into the cluster), and everything the operator itself does (operator/src/rbac.ts).

import type { PolicyRule } from "@berth/crds";

export interface TargetNamespaces {
  /** Where session pods and their mirror resources live. Default `berth-sessions`. */
  sessions: string;
  /** Where the GPU device plugin's DaemonSet is looked for. Default `kube-system`. */
  devicePlugin: string;
}

export const DEFAULT_TARGET_NAMESPACES: TargetNamespaces = { sessions: "berth-sessions", devicePlugin: "kube-system" };

/** A PolicyRule that names its groups and resources (the probe asks about each). */
export type RbacRule = PolicyRule & { apiGroups: string[]; resources: string[] };

export interface NamespacedRules {
  namespace: string;
  rules: RbacRule[];
}

export interface ControlPlaneRbac {
  /** A ClusterRole's rules. */
  cluster: RbacRule[];
  /** A Role's rules per namespace. */
  namespaced: NamespacedRules[];
}

export function controlPlaneRbac(ns: TargetNamespaces = DEFAULT_TARGET_NAMESPACES): ControlPlaneRbac {
  return {
    cluster: [
      // Cordon/uncordon (patch spec.unschedulable), delete, and the probe's GPU-node fallback.
      { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch", "patch", "delete"] },
      // The probe: the GPU runtime class by name.
      { apiGroups: ["node.k8s.io"], resources: ["runtimeclasses"], verbs: ["get"] },
    ],
    namespaced: [
      {
        namespace: ns.sessions,
        rules: [
          // Drain finds Berth's pods on a node; sessions read their pods and logs.
          { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] },
          { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
          // Drain evicts (respecting disruption budgets) instead of deleting.
          { apiGroups: [""], resources: ["pods/eviction"], verbs: ["create"] },
          // Dispatch writes each session's mirror resource for the operator to reconcile.
          {
            apiGroups: ["berth.dev"],
            resources: ["sessionmirrors"],
            verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
          },
          // A volume's claim that no session used for a while is released (controllers/src/sessions/claims.ts).
          { apiGroups: [""], resources: ["persistentvolumeclaims"], verbs: ["delete"] },
        ],
      },
      // The probe: the device plugin's DaemonSet.
      { namespace: ns.devicePlugin, rules: [{ apiGroups: ["apps"], resources: ["daemonsets"], verbs: ["list"] }] },
    ],
  };
}

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
  for (const r of rbac.cluster) add(r);
  for (const n of rbac.namespaced) for (const r of n.rules) add(r, n.namespace);
  return out;
}

/** "create pods/eviction in berth-sessions", "patch nodes" — what an administrator reads in details. */
export function describePermission(p: Permission): string {
  const res = `${p.subresource ? `${p.resource}/${p.subresource}` : p.resource}${p.group ? `.${p.group}` : ""}`;
  return `${p.verb} ${res}${p.namespace ? ` in ${p.namespace}` : " (cluster-wide)"}`;
}

/**
 * What the clusters domain does in the management cluster (the API's own ServiceAccount): the Cluster
 * resources and their status, and Secrets in the control plane's namespace (credentials, signing key).
 */
export function managementRbac(controlPlaneNamespace = "berth-system"): ControlPlaneRbac {
  return {
    cluster: [
      {
        apiGroups: ["berth.dev"],
        resources: ["clusters"],
        verbs: ["get", "list", "watch", "create", "patch", "delete"],
      },
      { apiGroups: ["berth.dev"], resources: ["clusters/status"], verbs: ["get", "patch"] },
    ],
    namespaced: [
      {
        namespace: controlPlaneNamespace,
        rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "create", "delete"] }],
      },
    ],
  };
}
