// Test support for cluster registration and the internal plane, on the bed: least-privilege credentials
// for the control plane (in the management cluster and in each GPU cluster), the Cluster CRD installed,
// an in-process API with real users, and a clusters runtime whose clock the test owns.
import { createServer, type Server, type Socket } from "node:net";
import { makeClusterClients } from "@berth/api";
import type { ControlPlaneRbac } from "@berth/api/rbac";
import {
  type ClustersOptions,
  type ClustersRuntime,
  createClustersRuntime,
  type HasLiveWork,
  type IdentityTestApi,
  startIdentityTestApi,
  TestClock,
  type TestUser,
} from "@berth/api/testing";
import { type Fleet, type FleetDescription, kubeConfigFrom, startFleet } from "../index.ts";
import { mintControlPlaneCredential, prepareManagementCluster } from "./credentials.ts";

export { adminKube, mintControlPlaneCredential, prepareManagementCluster } from "./credentials.ts";

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
  /** The API's least-privilege kubeconfig for the management cluster. */
  managementKubeconfig: string;
  /** Set to make deregistration see live work. */
  liveWork: Set<string>;
  /** `{server, ca_data, token}` of a fresh least-privilege credential for that GPU cluster. */
  credentialFor(
    cluster: string,
    opts?: { name?: string; rbac?: ControlPlaneRbac },
  ): Promise<{ server: string; ca_data: string; token: string }>;
  stop(): Promise<void>;
}

export async function startClustersBed(
  description: FleetDescription,
  opts: { options?: Partial<ClustersOptions>; hasLiveWork?: HasLiveWork } = {},
): Promise<ClustersBed> {
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
      clients: makeClusterClients(kubeConfigFrom(apiCredential.kubeconfig)),
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
      managementKubeconfig: apiCredential.kubeconfig,
      async credentialFor(cluster, o = {}) {
        const c = fleet.cluster(cluster);
        const cred = await mintControlPlaneCredential(c, {
          name: o.name ?? `berth-control-plane-${++n}`,
          ...(o.rbac ? { rbac: o.rbac } : {}),
        });
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
