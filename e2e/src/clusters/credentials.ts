// Least-privilege credentials for Berth's control plane on the bed, and the management cluster's set-up
// for cluster registration (the Cluster CRD, `berth-system`). Used by the tests and by `npm start`; no
// test framework here.

import { type ControlPlaneRbac, controlPlaneRbac, managementRbac } from "@berth/api/rbac";
import { ClusterKind, resourcePath } from "@berth/crds";
import { loadCrds } from "@berth/crds/manifests";
import { KubeHttp } from "../testbed/kube.ts";
import type { Cluster, Credential, PolicyRule } from "../testbed/types.ts";

const RBAC = "/apis/rbac.authorization.k8s.io/v1";

export function adminKube(c: Cluster): KubeHttp {
  return new KubeHttp({ server: c.server, caPem: c.caPem, token: c.adminToken });
}

export interface ServiceAccountRules {
  /** Bound with a ClusterRoleBinding. */
  clusterRules?: PolicyRule[];
  /** One Role and RoleBinding per namespace (created when missing). */
  namespaceRules: { namespace: string; rules: PolicyRule[] }[];
}

/**
 * A ServiceAccount in `namespace` with exactly the given rules, and a token for it (TokenRequest). The
 * shape matches operator/src/rbac.ts' `operatorRbac()`, so the operator's credential is minted the same way.
 */
export async function mintServiceAccountCredential(
  c: Cluster,
  opts: { name: string; namespace: string } & ServiceAccountRules,
): Promise<Credential> {
  const home = opts.namespaceRules.find((n) => n.namespace === opts.namespace);
  const cred = await c.mintCredential({
    name: opts.name,
    namespace: opts.namespace,
    ...(home ? { rules: home.rules } : {}),
    ...(opts.clusterRules?.length ? { clusterRules: opts.clusterRules } : {}),
  });
  const kube = adminKube(c);
  try {
    for (const n of opts.namespaceRules.filter((x) => x.namespace !== opts.namespace)) {
      await kube.ensure("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: n.namespace } });
      const roleName = `${opts.name}-${opts.namespace}`;
      await kube.ensure(`${RBAC}/namespaces/${n.namespace}/roles`, {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: roleName, namespace: n.namespace },
        rules: n.rules,
      });
      await kube.ensure(`${RBAC}/namespaces/${n.namespace}/rolebindings`, {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: roleName, namespace: n.namespace },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: roleName },
        subjects: [{ kind: "ServiceAccount", name: opts.name, namespace: opts.namespace }],
      });
    }
  } finally {
    kube.close();
  }
  return cred;
}

/**
 * The credential Berth's control plane registers a GPU cluster with: exactly `controlPlaneRbac()` (or the
 * given rules), a ServiceAccount in the first namespace of the rules (the sessions namespace).
 */
export async function mintControlPlaneCredential(
  c: Cluster,
  opts: { name?: string; rbac?: ControlPlaneRbac } = {},
): Promise<Credential> {
  const rbac = opts.rbac ?? controlPlaneRbac();
  return mintServiceAccountCredential(c, {
    name: opts.name ?? "berth-control-plane",
    namespace: rbac.namespaceRules[0]?.namespace ?? "berth-system",
    clusterRules: rbac.clusterRules,
    namespaceRules: rbac.namespaceRules,
  });
}

/** The Cluster CRD and `berth-system` in the management cluster, and the API's least-privilege credential there. */
export async function prepareManagementCluster(mgmt: Cluster): Promise<Credential> {
  const kube = adminKube(mgmt);
  try {
    const crd = loadCrds().find((c) => c.metadata.name === ClusterKind.crdName);
    if (!crd) throw new Error("the Cluster CRD is not in crds/generated");
    await kube.ensure("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    await kube.ensure("/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "berth-system" },
    });
    for (let i = 0; ; i++) {
      const res = await kube.raw("GET", resourcePath(ClusterKind));
      if (res.status === 200) break;
      if (i > 100) throw new Error(`the Cluster CRD is never served: ${res.status} ${res.text}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    kube.close();
  }
  return mintControlPlaneCredential(mgmt, { name: "berth-api", rbac: managementRbac() });
}
