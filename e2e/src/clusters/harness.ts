// Test support for cluster registration and the internal plane, on the bed: least-privilege credentials
// for the control plane (in the management cluster and in each GPU cluster), the Cluster CRD installed,
// an in-process API with real users, and a clusters runtime whose clock the test owns.
import { createServer, type Server, type Socket } from "node:net";
import { ClusterKind } from "@berth/crds";
import { loadCrds } from "@berth/crds/manifests";
import { type ControlPlaneRbac, controlPlaneRbac, managementRbac } from "../../../api/src/clusters/permissions.ts";
import { type ClustersOptions, type ClustersRuntime, createClustersRuntime, type HasLiveWork } from "../../../api/src/clusters/runtime.ts";
import { type IdentityTestApi, startIdentityTestApi, type TestUser } from "../../../api/src/auth/testing.ts";
import { TestClock } from "../../../api/src/http/testing.ts";
import { type Cluster, type Credential, type Fleet, type FleetDescription, KubeHttp, kubeConfigFrom, startFleet } from "../index.ts";

const RBAC = "/apis/rbac.authorization.k8s.io/v1";

export function adminKube(c: Cluster): KubeHttp {
  return new KubeHttp({ server: c.server, caPem: c.caPem, token: c.adminToken });
}

/**
 * A ServiceAccount with exactly the given rules (default: `controlPlaneRbac()`, what Berth's control plane
 * does on a GPU cluster). It lives in the first namespaced entry's namespace; each further namespace gets
 * its own Role and RoleBinding.
 */
export async function mintControlPlaneCredential(c: Cluster, opts: { name?: string; rbac?: ControlPlaneRbac } = {}): Promise<Credential> {
  const rbac = opts.rbac ?? controlPlaneRbac();
  const name = opts.name ?? "berth-control-plane";
  const [home, ...others] = rbac.namespaced;
  const namespace = home?.namespace ?? "berth-system";
  const cred = await c.mintCredential({
    name,
    namespace,
    ...(home ? { rules: home.rules } : {}),
    ...(rbac.cluster.length ? { clusterRules: rbac.cluster } : {}),
  });
  const kube = adminKube(c);
  try {
    for (const n of others) {
      await kube.ensure("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: n.namespace } });
      const roleName = `${name}-${namespace}`;
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
        subjects: [{ kind: "ServiceAccount", name, namespace }],
      });
    }
  } finally {
    kube.close();
  }
  return cred;
}

/** The Cluster CRD and `berth-system` in the management cluster, and the API's least-privilege credential there. */
export async function prepareManagementCluster(mgmt: Cluster): Promise<Credential> {
  const kube = adminKube(mgmt);
  try {
    const crd = loadCrds().find((c) => c.metadata.name === ClusterKind.crdName);
    if (!crd) throw new Error("the Cluster CRD is not in crds/generated");
    await kube.ensure("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    await kube.ensure("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "berth-system" } });
    for (let i = 0; ; i++) {
      const res = await kube.raw("GET", `/apis/${ClusterKind.group}/${ClusterKind.version}/${ClusterKind.plural}`);
      if (res.status === 200) break;
      if (i > 100) throw new Error(`the Cluster CRD is never served: ${res.status} ${res.text}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    kube.close();
  }
  return mintControlPlaneCredential(mgmt, { name: "berth-api", rbac: managementRbac() });
}

/** A TCP server on loopback that accepts connections and never says a word: an address that "hangs". */
export async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nobody listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ClustersBed {
  fleet: Fleet;
  t: IdentityTestApi;
  runtime: ClustersRuntime;
  /** The clusters runtime's clock (operator tokens); the identity API keeps its own. */
  tokenClock: TestClock;
  superAdmin: TestUser;
  user: TestUser;
  /** Set to make deregistration see live work. */
  liveWork: Set<string>;
  /** `{server, ca_data, token}` of a fresh least-privilege credential for that GPU cluster. */
  credentialFor(cluster: string, opts?: { name?: string; rbac?: ControlPlaneRbac }): Promise<{ server: string; ca_data: string; token: string }>;
  stop(): Promise<void>;
}

export async function startClustersBed(description: FleetDescription, opts: { options?: Partial<ClustersOptions>; hasLiveWork?: HasLiveWork } = {}): Promise<ClustersBed> {
  const fleet = await startFleet(description);
  let t: IdentityTestApi | undefined;
  try {
    const mgmt = fleet.clusters.find((c) => c.kind === "management");
    if (!mgmt) throw new Error("the fleet needs a management cluster");
    const apiCredential = await prepareManagementCluster(mgmt);
    t = await startIdentityTestApi();
    const tokenClock = new TestClock(new Date());
    const liveWork = new Set<string>();
    const runtime = await createClustersRuntime({
      kubeConfig: kubeConfigFrom(apiCredential.kubeconfig),
      db: t.database.db,
      clock: tokenClock,
      log: t.deps.log,
      options: { probeTimeoutMs: 5_000, ...opts.options },
      hasLiveWork: opts.hasLiveWork ?? (async (id) => liveWork.has(id)),
    });
    t.deps.clusters = runtime;
    const [superAdmin, user] = await Promise.all([t.aUser({ superAdmin: true }), t.aUser()]);
    let n = 0;
    const api = t;
    return {
      fleet,
      t,
      runtime,
      tokenClock,
      superAdmin,
      user,
      liveWork,
      async credentialFor(cluster, o = {}) {
        const c = fleet.cluster(cluster);
        const cred = await mintControlPlaneCredential(c, { name: o.name ?? `berth-control-plane-${++n}`, ...(o.rbac ? { rbac: o.rbac } : {}) });
        return { server: c.server, ca_data: c.caPem, token: cred.token };
      },
      async stop() {
        await api.stop();
        await fleet.stop();
      },
    };
  } catch (err) {
    await t?.stop();
    await fleet.stop();
    throw err;
  }
}
