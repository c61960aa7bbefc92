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
import { execFileSync } from "node:child_process";
import { createServer, connect as netConnect, type Server, type Socket } from "node:net";
import { buildClusterRbac } from "@berth/api/rbac";
import { installBuildsOn } from "@berth/api/testing";
import { BUILD_CONTROLLER_RULES } from "@berth/controllers";
import { HttpKube } from "@berth/controllers/kube";
import { kubeConfigFrom } from "../testbed/kubeconfig.ts";
import type { RealNode } from "../testbed/real-node/index.ts";
import type { Cluster } from "../testbed/types.ts";

export const BUILDS_NAMESPACE = "berth-builds";
/** The Job's node selector on a real node's cluster (BERTH_OPERATOR_BUILDS_NODE_SELECTOR). */
export const REAL_NODE_BUILDS = { "berth.dev/real-node": "true" } as const;

/** The pods' gateway on the node's bridge: the subnet's first address (`10.234.0.0/24` → `10.234.0.1`). */
export function bridgeGateway(podCidr: string): { address: string; prefix: number } {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(podCidr);
  if (!m) throw new Error(`${podCidr} is not an IPv4 CIDR`);
  return { address: `${m[1]}.${m[2]}.${m[3]}.${Number(m[4]) + 1}`, prefix: Number(m[5]) };
}

/** Makes the node's bridge with its gateway address if the first pod has not yet; answers the address. */
export function ensureBridgeAddress(node: RealNode): string {
  const { address, prefix } = bridgeGateway(node.podCidr);
  const bridge = node.layout.bridge;
  const ip = (...args: string[]) => execFileSync("ip", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  let shown = "";
  try {
    shown = ip("-o", "addr", "show", "dev", bridge);
  } catch {
    ip("link", "add", "name", bridge, "type", "bridge");
  }
  if (!shown.includes(` ${address}/`)) ip("addr", "add", `${address}/${prefix}`, "dev", bridge);
  ip("link", "set", bridge, "up");
  return address;
}

export interface RegistryRelay {
  /** `<address>:<port>`, as image references name it. */
  host: string;
  stop(): Promise<void>;
}

/** Listens on `address` (a free port) and passes every connection on to `target` (`host:port`). */
export async function startRegistryRelay(address: string, target: string): Promise<RegistryRelay> {
  const [toHost, toPort] = [
    target.slice(0, target.lastIndexOf(":")),
    Number(target.slice(target.lastIndexOf(":") + 1)),
  ];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = netConnect(toPort, toHost);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, address, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  return {
    host: `${address}:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
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
