// The Kubernetes permissions the operator needs in its GPU cluster, as data: the control plane installs
// them at registration (a ServiceAccount, a ClusterRole with `clusterRules`, and a Role per entry of
// `namespaceRules`, each bound to the account). RBAC is on in the test bed, so a rule missing here fails
// a test; a rule that is here but unused is a grant nobody needs — keep both lists honest.
//
// Inventory needs only the cluster-wide reads and the lease; the session-namespace rules are for
// reconciling session mirrors into pods (controllers/src/mirror/).

import type { DeployableRbac } from "@berth/crds";

/** The operator's grants in its GPU cluster. */
export type OperatorRbac = DeployableRbac;

export interface OperatorRbacOptions {
  /** Where the operator runs and keeps its Lease. Default `berth-system`. */
  systemNamespace?: string;
  /** Where session pods, services, claims and policies live. Default `berth-sessions`. */
  sessionsNamespace?: string;
  /** The leader-election Lease. Default `berth-operator`. */
  leaseName?: string;
}

const READ = ["get", "list", "watch"];
const OWN = ["get", "list", "watch", "create", "update", "patch", "delete"];

export function operatorRbac(opts: OperatorRbacOptions = {}): OperatorRbac {
  const systemNamespace = opts.systemNamespace ?? "berth-system";
  const sessionsNamespace = opts.sessionsNamespace ?? "berth-sessions";
  const leaseName = opts.leaseName ?? "berth-operator";
  return {
    clusterRules: [
      // Inventory: GPU model, counts, labels, cordon and readiness of every node.
      { apiGroups: [""], resources: ["nodes"], verbs: READ },
      // Inventory: GPUs in use are held by pods of any namespace, not only Berth's.
      { apiGroups: [""], resources: ["pods"], verbs: READ },
      // Volume sync: the storage driver's capacity reports (operator/src/storage/reporter.ts).
      { apiGroups: ["storage.k8s.io"], resources: ["csistoragecapacities"], verbs: ["list"] },
    ],
    namespaceRules: [
      {
        namespace: systemNamespace,
        rules: [
          // `create` cannot be limited by name (the name is not known when RBAC decides).
          { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
          {
            apiGroups: ["coordination.k8s.io"],
            resources: ["leases"],
            resourceNames: [leaseName],
            verbs: ["get", "update"],
          },
        ],
      },
      {
        namespace: sessionsNamespace,
        rules: [
          // The session mirror written by the control plane: read it, report on it, own what it makes.
          {
            apiGroups: ["berth.dev"],
            resources: ["sessionmirrors"],
            verbs: ["get", "list", "watch", "update", "patch"],
          },
          { apiGroups: ["berth.dev"], resources: ["sessionmirrors/status"], verbs: ["get", "update", "patch"] },
          // Owner references with blockOwnerDeletion need this (OwnerReferencesPermissionEnforcement).
          { apiGroups: ["berth.dev"], resources: ["sessionmirrors/finalizers"], verbs: ["update"] },
          { apiGroups: [""], resources: ["pods", "services", "persistentvolumeclaims"], verbs: OWN },
          { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
          { apiGroups: ["networking.k8s.io"], resources: ["networkpolicies"], verbs: OWN },
          { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
          { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
        ],
      },
    ],
  };
}

/** The rules with the default names. */
export const OPERATOR_RBAC: OperatorRbac = operatorRbac();
