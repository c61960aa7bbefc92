// What an operator's install does on a GPU cluster of the bed, as its install makes it: the namespaces,
// the mirror CRD and a least-privilege account from the operator's rule list.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { resourcePath, SessionMirrorKind } from "@berth/crds";
import { loadCrds } from "@berth/crds/manifests";
import { operatorRbac } from "@berth/operator";
import type { Cluster, Credential, KubeHttp } from "../index.ts";
import { adminKube, SESSIONS_NS, SYSTEM_NS } from "./fleet.ts";

/** What an operator's install does on its GPU cluster: namespaces, the mirror CRD, a least-privilege account. */
export async function installOperator(c: Cluster, dir: string, operatorCredential?: Credential): Promise<string> {
  const admin = adminKube(c);
  try {
    const crd = loadCrds().find((x) => x.metadata.name === SessionMirrorKind.crdName);
    await admin.ensure("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    await ensureOperatorNamespaces(admin);
    const path = join(dir, `operator-${c.name}.kubeconfig`);
    if (operatorCredential) {
      await waitForMirrorCrd(admin, c.name);
      writeFileSync(path, operatorCredential.kubeconfig);
      return path;
    }
    const rbac = operatorRbac();
    const system = rbac.namespaceRules.find((n) => n.namespace === SYSTEM_NS);
    const cred = await c.mintCredential({
      name: "berth-operator",
      namespace: SYSTEM_NS,
      clusterRules: rbac.clusterRules,
      rules: system?.rules ?? [],
    });
    for (const { namespace, rules } of rbac.namespaceRules.filter((n) => n.namespace !== SYSTEM_NS)) {
      const r = "/apis/rbac.authorization.k8s.io/v1";
      await admin.ensure(`${r}/namespaces/${namespace}/roles`, {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: "berth-operator" },
        rules,
      });
      await admin.ensure(`${r}/namespaces/${namespace}/rolebindings`, {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "berth-operator" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "berth-operator" },
        subjects: [{ kind: "ServiceAccount", name: cred.serviceAccount, namespace: cred.namespace }],
      });
    }
    await waitForMirrorCrd(admin, c.name);
    writeFileSync(path, cred.kubeconfig);
    return path;
  } finally {
    admin.close();
  }
}

export async function ensureOperatorNamespaces(admin: KubeHttp): Promise<void> {
  for (const ns of [SYSTEM_NS, SESSIONS_NS]) {
    const labels = ns === SESSIONS_NS ? { "pod-security.kubernetes.io/enforce": "restricted" } : {};
    await admin.ensure("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: ns, labels } });
  }
}

async function waitForMirrorCrd(admin: KubeHttp, cluster: string): Promise<void> {
  for (let i = 0; ; i++) {
    const res = await admin.raw("GET", resourcePath(SessionMirrorKind, { namespace: SESSIONS_NS }));
    if (res.status === 200) return;
    if (i > 100) throw new Error(`the SessionMirror CRD is never served on ${cluster}: ${res.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
