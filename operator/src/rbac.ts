// The Kubernetes permissions the operator needs in its GPU cluster, as data: the control plane installs
// them at registration (a ServiceAccount, a ClusterRole with `clusterRules`, and a Role per entry of
// `namespaceRules`, each bound to the account). RBAC is on in the test bed, so a rule missing here fails
// a test; a rule that is here but unused is a grant nobody needs — keep both lists honest.
//
// Inventory needs only the cluster-wide reads and the lease; the session-namespace rules are for
// reconciling session mirrors into pods (controllers/src/mirror/); on a build cluster, the builds
// namespace's rules are the build controller's (controllers/src/builds/).

import { BUILD_CONTROLLER_RULES } from "@berth/controllers";
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
  /**
   * On a cluster marked for image builds: the builds namespace (BERTH_OPERATOR_BUILDS_NAMESPACE). Unset:
   * no build grants.
   */
  buildsNamespace?: string;
}

const READ = ["get", "list", "watch"];
/** What the mirror controller does to what it owns: create, watch, delete (never update: it recreates). */
const OWN = ["list", "watch", "create", "delete"];

export function operatorRbac(opts: OperatorRbacOptions = {}): OperatorRbac {
  const systemNamespace = opts.systemNamespace ?? "berth-system";
  const sessionsNamespace = opts.sessionsNamespace ?? "berth-sessions";
  const leaseName = opts.leaseName ?? "berth-operator";
  return {
    clusterRules: [
      // Inventory: GPU model, counts, labels, cordon and readiness of every node.
      { apiGroups: [""], resources: ["nodes"], verbs: READ },
      // Inventory: GPUs in use are held by pods of any namespace, not only Berth's (an informer: no get).
      { apiGroups: [""], resources: ["pods"], verbs: ["list", "watch"] },
      // Volume sync: the storage driver's capacity reports (operator/src/storage/reporter.ts).
      { apiGroups: ["storage.k8s.io"], resources: ["csistoragecapacities"], verbs: ["list"] },
      // Volume sync: the space used on session volumes, from the kubelet's stats summary (node proxy).
      { apiGroups: [""], resources: ["nodes/proxy"], verbs: ["get"] },
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
          // The session mirror written by the control plane: watch it, report on it, release its finalizer.
          { apiGroups: ["berth.dev"], resources: ["sessionmirrors"], verbs: ["list", "watch", "patch"] },
          { apiGroups: ["berth.dev"], resources: ["sessionmirrors/status"], verbs: ["patch"] },
          // Owner references with blockOwnerDeletion need this (OwnerReferencesPermissionEnforcement).
          { apiGroups: ["berth.dev"], resources: ["sessionmirrors/finalizers"], verbs: ["update"] },
          // Pods only: the gateway follows their addresses (GET /routes), no Service per session.
          { apiGroups: [""], resources: ["pods"], verbs: OWN },
          // A session's volume claims: made where it lands, read until bound (the control plane releases them).
          { apiGroups: [""], resources: ["persistentvolumeclaims"], verbs: ["get", "create"] },
          // The namespace's policy is read before the informer syncs and rewritten (PUT) when it drifts.
          { apiGroups: ["networking.k8s.io"], resources: ["networkpolicies"], verbs: ["get", "update", ...OWN] },
        ],
      },
      ...(opts.buildsNamespace ? [{ namespace: opts.buildsNamespace, rules: BUILD_CONTROLLER_RULES }] : []),
    ],
  };
}

/** The rules with the default names. */
export const OPERATOR_RBAC: OperatorRbac = operatorRbac();

/**
 * The session gateway's grants in its GPU cluster: reading a session's pod, to ask whether it runs
 * (gateway/podGate.ts). Nothing cluster-wide.
 */
export function gatewayRbac(opts: { sessionsNamespace?: string } = {}): DeployableRbac {
  const sessionsNamespace = opts.sessionsNamespace ?? "berth-sessions";
  return {
    clusterRules: [],
    namespaceRules: [
      { namespace: sessionsNamespace, rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] },
    ],
  };
}

/** The gateway's rules with the default names. */
export const GATEWAY_RBAC: DeployableRbac = gatewayRbac();
