// Least-privilege credentials: a ServiceAccount bound to a Role and/or ClusterRole, with a token from the
// TokenRequest API (no Secret-based tokens). RBAC is on in every cluster, so a missing rule fails a test.
import type { KubeHttp } from "./kube.ts";
import { kubeconfigText } from "./kubeconfig.ts";
import type { Credential, MintCredentialOptions } from "./types.ts";

const THIRTY_DAYS = 30 * 24 * 3600;

export interface MintContext {
  kube: KubeHttp;
  cluster: string;
  server: string;
  caPem: string;
}

export async function mintCredential(ctx: MintContext, opts: MintCredentialOptions): Promise<Credential> {
  const { kube } = ctx;
  const ns = opts.namespace ?? "default";
  const name = opts.name;
  const subject = [{ kind: "ServiceAccount", name, namespace: ns }];
  await kube.ensure("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  await kube.ensure(`/api/v1/namespaces/${ns}/serviceaccounts`, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name },
  });
  const rbac = "/apis/rbac.authorization.k8s.io/v1";
  if (opts.rules) {
    await upsert(kube, `${rbac}/namespaces/${ns}/roles`, name, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name, namespace: ns },
      rules: opts.rules,
    });
    await upsert(kube, `${rbac}/namespaces/${ns}/rolebindings`, name, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name, namespace: ns },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: subject,
    });
  }
  if (opts.clusterRules) {
    const clusterName = `berth-testbed:${ns}:${name}`; // cluster-scoped: the namespace keeps names apart
    await upsert(kube, `${rbac}/clusterroles`, clusterName, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: clusterName },
      rules: opts.clusterRules,
    });
    await upsert(kube, `${rbac}/clusterrolebindings`, clusterName, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: clusterName },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: clusterName },
      subjects: subject,
    });
  }
  const tr = await kube.json<{ status: { token: string; expirationTimestamp: string } }>(
    "POST",
    `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`,
    {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { expirationSeconds: opts.expirationSeconds ?? THIRTY_DAYS },
    },
  );
  const username = `system:serviceaccount:${ns}:${name}`;
  return {
    serviceAccount: name,
    namespace: ns,
    username,
    token: tr.status.token,
    expiresAt: tr.status.expirationTimestamp,
    kubeconfig: kubeconfigText({
      cluster: ctx.cluster,
      server: ctx.server,
      caPem: ctx.caPem,
      user: `${ns}:${name}`,
      token: tr.status.token,
    }),
  };
}

/** Create, or replace the existing object's content (minting twice with other rules takes the new rules). */
async function upsert(kube: KubeHttp, collection: string, name: string, body: Record<string, unknown>): Promise<void> {
  const res = await kube.raw("POST", collection, body);
  if (res.status !== 409) {
    if (res.status >= 300) throw new Error(`POST ${collection} -> ${res.status}: ${res.text}`);
    return;
  }
  const { roleRef: _immutable, ...patch } = body; // roleRef cannot change; rules and subjects can
  await kube.json("PATCH", `${collection}/${name}`, patch, "application/merge-patch+json");
}
