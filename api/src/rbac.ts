// The API's and the worker's Kubernetes grants as data (crds' DeployableRbac, as operator/src/rbac.ts and
// the gateway's): what each needs in the management cluster, and what the control plane needs in a GPU
// cluster with its registered credential. The registration probe asks for every verb of
// `controlPlaneRbac()` (api/src/domain/clusters/probe.ts); the test bed and `npm start` mint exactly these
// grants (RBAC is on in the bed, so a rule missing here fails a test); manifests can be made of them.

import type { DeployableRbac, NamespaceRules, PolicyRule } from "@berth/crds";

export interface TargetNamespaces {
  /** Where session pods and their mirror resources live. Default `berth-sessions`. */
  sessions: string;
  /** Where the GPU device plugin's DaemonSet is looked for. Default `kube-system`. */
  devicePlugin: string;
}

export const DEFAULT_TARGET_NAMESPACES: TargetNamespaces = { sessions: "berth-sessions", devicePlugin: "kube-system" };

/** A PolicyRule that names its groups and resources (the probe asks about each). */
export type RbacRule = PolicyRule & { apiGroups: string[]; resources: string[] };

export interface NamespacedRules extends NamespaceRules {
  rules: RbacRule[];
}

/** DeployableRbac whose rules name their groups and resources. */
export interface ControlPlaneRbac extends DeployableRbac {
  clusterRules: RbacRule[];
  namespaceRules: NamespacedRules[];
}

/** Several grants as one credential's. */
export const mergeRbac = (...rs: ControlPlaneRbac[]): ControlPlaneRbac => ({
  clusterRules: rs.flatMap((r) => r.clusterRules),
  namespaceRules: rs.flatMap((r) => r.namespaceRules),
});

/**
 * What the control plane does on a GPU cluster with its registered credential.
 *
 * Not here: creating namespaces (the operator's install creates `berth-system` and the session
 * namespace), anything in `berth-system` (the operator token is handed to the administrator, not written
 * into the cluster), and everything the operator itself does (operator/src/rbac.ts).
 */
export function controlPlaneRbac(ns: TargetNamespaces = DEFAULT_TARGET_NAMESPACES): ControlPlaneRbac {
  return {
    clusterRules: [
      // Cordon/uncordon (patch spec.unschedulable), delete, and the probe's GPU-node fallback (a list).
      { apiGroups: [""], resources: ["nodes"], verbs: ["list", "patch", "delete"] },
      // The probe: the GPU runtime class by name.
      { apiGroups: ["node.k8s.io"], resources: ["runtimeclasses"], verbs: ["get"] },
      // A deleted volume's data, after its grace period: its PVs are handed back to the storage driver
      // (reclaim policy Delete; controllers/src/sessions/claims-pass.ts purgeVolume).
      { apiGroups: [""], resources: ["persistentvolumes"], verbs: ["list", "patch"] },
    ],
    namespaceRules: [
      {
        namespace: ns.sessions,
        rules: [
          // Drain finds Berth's pods on a node (a list); sessions read their pods' logs.
          { apiGroups: [""], resources: ["pods"], verbs: ["list"] },
          { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
          // Drain evicts (respecting disruption budgets) instead of deleting.
          { apiGroups: [""], resources: ["pods/eviction"], verbs: ["create"] },
          // Dispatch writes each session's mirror resource for the operator to reconcile: a server-side
          // apply (patch, and create where it makes the mirror), a look before a new revision, a delete.
          { apiGroups: ["berth.dev"], resources: ["sessionmirrors"], verbs: ["get", "create", "patch", "delete"] },
          // A volume's claim that no session used for a while is released (controllers/src/sessions/claims.ts),
          // and looked at until it is gone (a pod may hold it a while): the release race.
          // Snapshots (api/src/worker/snapshots.ts) also make a volume's claim where it has none, and a
          // restored volume's first claim from its snapshot.
          { apiGroups: [""], resources: ["persistentvolumeclaims"], verbs: ["get", "create", "delete"] },
          {
            apiGroups: ["snapshot.storage.k8s.io"],
            resources: ["volumesnapshots"],
            verbs: ["get", "create", "delete"],
          },
        ],
      },
      // The probe: the device plugin's DaemonSet.
      { namespace: ns.devicePlugin, rules: [{ apiGroups: ["apps"], resources: ["daemonsets"], verbs: ["list"] }] },
    ],
  };
}

/**
 * What the control plane does on a cluster marked for image builds, on top of controlPlaneRbac(): the
 * worker writes each build's ImageBuild into the builds namespace and deletes it at the end or on cancel
 * (api/src/worker/builds.ts). Marking a cluster checks these (api/src/domain/images/builds.ts).
 */
export function buildClusterRbac(buildsNamespace = "berth-builds"): ControlPlaneRbac {
  return {
    clusterRules: [],
    namespaceRules: [
      {
        namespace: buildsNamespace,
        rules: [{ apiGroups: ["berth.dev"], resources: ["imagebuilds"], verbs: ["create", "delete"] }],
      },
    ],
  };
}

/**
 * What the clusters domain does in the management cluster (the API's own ServiceAccount): the Cluster
 * resources and their status, and Secrets in the control plane's namespace (credentials, signing key).
 */
export function managementRbac(controlPlaneNamespace = "berth-system"): ControlPlaneRbac {
  return {
    clusterRules: [
      {
        apiGroups: ["berth.dev"],
        resources: ["clusters"],
        verbs: ["get", "list", "create", "patch", "delete"],
      },
      { apiGroups: ["berth.dev"], resources: ["clusters/status"], verbs: ["patch"] },
    ],
    namespaceRules: [
      {
        namespace: controlPlaneNamespace,
        rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "create", "delete"] }],
      },
    ],
  };
}

/** What the API does in the management cluster for sessions (on top of managementRbac()). */
export function apiSessionsRbac(): ControlPlaneRbac {
  return {
    clusterRules: [
      { apiGroups: ["berth.dev"], resources: ["sessions"], verbs: ["get", "list", "create", "patch"] },
      {
        apiGroups: ["berth.dev"],
        resources: ["offerings", "resourcepresets", "images", "resourcepolicies", "volumes"],
        verbs: ["get", "list"],
      },
      // Storage (api/src/domain/storage): pools and volumes are written by the API.
      { apiGroups: ["berth.dev"], resources: ["pools"], verbs: ["get", "list", "create", "patch", "delete"] },
      { apiGroups: ["berth.dev"], resources: ["pools/status"], verbs: ["patch"] },
      // Deleting a volume marks it (a patch); the worker removes it after its grace (claims-pass.ts purgeVolume).
      { apiGroups: ["berth.dev"], resources: ["volumes"], verbs: ["create", "patch"] },
      // A member deletes their private image (api/src/domain/images/privateImages.ts).
      { apiGroups: ["berth.dev"], resources: ["images"], verbs: ["delete"] },
      { apiGroups: [""], resources: ["events"], verbs: ["list"] },
      { apiGroups: [""], resources: ["namespaces"], verbs: ["create"] },
    ],
    namespaceRules: [],
  };
}

/** The API also installs the default catalog (create-if-absent) and the system wallet at start. */
export function catalogRbac(): ControlPlaneRbac {
  return {
    clusterRules: [
      {
        apiGroups: ["berth.dev"],
        resources: ["offerings", "resourcepresets", "images", "resourcepolicies"],
        verbs: ["get", "list", "create", "update"],
      },
      { apiGroups: ["berth.dev"], resources: ["wallets"], verbs: ["get", "create", "patch"] },
    ],
    namespaceRules: [],
  };
}

/** The API's whole grant in the management cluster, as `npm start` runs it. */
export function apiRbac(controlPlaneNamespace = "berth-system"): ControlPlaneRbac {
  return mergeRbac(managementRbac(controlPlaneNamespace), apiSessionsRbac(), catalogRbac());
}

/** What the worker's credential needs in the management cluster for billing (part of workerRbac). */
export function billingWorkerRbac(): ControlPlaneRbac {
  return {
    clusterRules: [
      { apiGroups: ["berth.dev"], resources: ["wallets"], verbs: ["get", "create", "patch"] },
      { apiGroups: ["berth.dev"], resources: ["wallets/status"], verbs: ["patch"] },
      // Pausing a session out of credits goes through the sessions domain, which patches the resource.
      { apiGroups: ["berth.dev"], resources: ["sessions"], verbs: ["patch"] },
      { apiGroups: [""], resources: ["namespaces"], verbs: ["create"] },
    ],
    namespaceRules: [],
  };
}

/** What the worker does in the management cluster (least privilege; RBAC is on in the bed). */
export function workerRbac(controlPlaneNamespace = "berth-system"): ControlPlaneRbac {
  return {
    clusterRules: [
      // The controller's informers (controllers/src/sessions/observed.ts) list and watch; a system pause (idle,
      // time limit, out of credits) reads the resource before it patches it (api/src/domain/sessions/lookup.ts);
      // status is a PUT, the reclaim loop's mark a PATCH (api/src/domain/reclaim/watch.ts).
      { apiGroups: ["berth.dev"], resources: ["sessions"], verbs: ["get", "list", "watch", "delete"] },
      { apiGroups: ["berth.dev"], resources: ["sessions/status"], verbs: ["update", "patch"] },
      // Where a volume's claim is; a deleted volume is removed after its grace (controllers/src/sessions/claims-pass.ts).
      { apiGroups: ["berth.dev"], resources: ["volumes/status"], verbs: ["patch"] },
      { apiGroups: ["berth.dev"], resources: ["volumes"], verbs: ["delete"] },
      {
        apiGroups: ["berth.dev"],
        resources: ["clusters", "offerings", "resourcepresets", "images", "volumes", "pools"],
        verbs: ["list", "watch"],
      },
      // Billing reads an offering's rate (api/src/domain/credits/context.ts); the reclaim loop lists policies.
      { apiGroups: ["berth.dev"], resources: ["offerings"], verbs: ["get"] },
      { apiGroups: ["berth.dev"], resources: ["resourcepolicies"], verbs: ["list"] },
      { apiGroups: [""], resources: ["events"], verbs: ["create"] },
      // Imports publish a member's private image (api/src/worker/imports.ts).
      { apiGroups: ["berth.dev"], resources: ["images"], verbs: ["get", "create", "update", "delete"] },
      ...billingWorkerRbac().clusterRules,
    ],
    namespaceRules: [
      {
        namespace: controlPlaneNamespace,
        rules: [
          { apiGroups: [""], resources: ["secrets"], verbs: ["get"] },
          { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] },
        ],
      },
    ],
  };
}
