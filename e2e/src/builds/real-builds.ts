// Real image builds on the bed's real node (docs/dev/images.md, "Builds"): what `npm start` and the
// builds journey set up on the real node's cluster so it is a build cluster.
//
// - A way from the node's pods to Berth's registry. The bed's registries listen on loopback, which a pod's
//   network namespace cannot reach; a relay listens on the node bridge's gateway address (the host's side of
//   the pods' subnet) and passes each connection on to the registry. The host reaches that address too, so
//   one name serves the builder's push and pulls, the kubelet's pulls and the worker's reads:
//   BERTH_REGISTRY_PULL_PREFIX. The bridge is made (with that address) before the first pod would make it,
//   so the relay can listen at once; the CNI bridge plugin takes it as it is, the node's teardown removes it.
// - The install on the cluster: the ImageBuild resource and the builds namespace (as the operator's install
//   makes them), and Roles there for the control plane's credential (buildClusterRbac: what marking checks)
//   and the operator's (BUILD_CONTROLLER_RULES).
import { buildClusterRbac } from "@berth/api/rbac";
import { installBuildsOn } from "@berth/api/testing";
import { BUILD_CONTROLLER_RULES } from "@berth/controllers";
import { HttpKube } from "@berth/controllers/kube";
import { kubeConfigFrom } from "../testbed/kubeconfig.ts";
import { startTcpRelay, type TcpRelay } from "../testbed/real-node/bridge.ts";
import type { Cluster } from "../testbed/types.ts";

export const BUILDS_NAMESPACE = "berth-builds";
/** The Job's node selector on a real node's cluster (BERTH_OPERATOR_BUILDS_NODE_SELECTOR). */
export const REAL_NODE_BUILDS = { "berth.dev/real-node": "true" } as const;

export { bridgeGateway, ensureBridgeAddress } from "../testbed/real-node/bridge.ts";

export type RegistryRelay = TcpRelay;

/** Listens on `address` (a free port) and passes every connection on to the registry at `target` (`host:port`). */
export function startRegistryRelay(address: string, target: string): Promise<RegistryRelay> {
  return startTcpRelay(address, target);
}

interface Subject {
  name: string;
  namespace: string;
}

/**
 * The ImageBuild resource and the builds namespace on `cluster`, and Roles there for the control plane's
 * service account (what marking checks) and the operator's (what its build controller does).
 */
export async function installBuildCluster(
  cluster: Cluster,
  who: { controlPlane: Subject; operator: Subject },
  namespace = BUILDS_NAMESPACE,
): Promise<void> {
  const kube = new HttpKube(kubeConfigFrom(cluster.kubeconfig));
  try {
    await installBuildsOn(kube, namespace);
    const cp = buildClusterRbac(namespace).namespaceRules.find((n) => n.namespace === namespace)?.rules ?? [];
    const grants: [string, Subject, unknown[]][] = [
      ["berth-control-plane-builds", who.controlPlane, cp],
      ["berth-operator-builds", who.operator, BUILD_CONTROLLER_RULES],
    ];
    const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}`;
    for (const [name, subject, rules] of grants) {
      const role = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: { name, namespace }, rules };
      const binding = {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name, namespace },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
        subjects: [{ kind: "ServiceAccount", ...subject }],
      };
      for (const [path, body] of [
        [`${rbac}/roles`, role],
        [`${rbac}/rolebindings`, binding],
      ] as const) {
        const r = await kube.request("POST", path, { body });
        if (r.status !== 201 && r.status !== 409) throw new Error(`${path} ${name}: ${r.status}`);
      }
    }
  } finally {
    kube.close();
  }
}
