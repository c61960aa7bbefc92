// The connect bed: a real fleet (management + two GPU clusters, kwok serving the stand-in's log lines as
// every pod's log), the API with the real authenticator and the real connect/logs/usage routes, the
// internal plane with operator-token auth and the verify route, both GPU clusters registered through the
// REST API, and per GPU cluster a gateway over TLS on its own loopback port (its certificate made for it),
// authenticated to the control plane with that cluster's operator token, with the stand-in application
// behind it (pod IPs are data here). Each cluster's session_domain is 127.0.0.1:<its gateway's port>.
//
// Sessions are seeded as the sessions domain leaves them once a session runs: a history row (phase,
// cluster) and, on the GPU cluster, the pod the operator makes (named after the session's resource, in
// berth-sessions, holding a GPU). A pause is the same two facts undone.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeClusterClients } from "@berth/api";
import {
  createClustersRuntime,
  domainInternalRoutes,
  type IdentityTestApi,
  type InternalListener,
  startIdentityTestApi,
  startInternalListener,
  type TestUser,
} from "@berth/api/testing";
import {
  gatedUpstreams,
  httpVerifier,
  kubePodRunning,
  type RunningGateway,
  StaticUpstreams,
  selfSignedCertificate,
  startGateway,
} from "@berth/operator/gateway";
import { type RunningStandin, STANDIN_LOG_LINES, startStandin } from "@berth/operator/standin";
import { adminKube, mintControlPlaneCredential, prepareManagementCluster } from "../clusters/credentials.ts";
import { bedApi } from "../console/api-client.ts";
import { type Cluster, type Fleet, kubeConfigFrom, startFleet } from "../index.ts";
import { eventually } from "../testbed/waiting.test-support.ts";

export const H100 = "NVIDIA-H100-80GB-HBM3";
export const L4 = "NVIDIA-L4";
export const SESSIONS_NAMESPACE = "berth-sessions";

export interface GpuSide {
  name: string;
  clusterId: string;
  operatorToken: string;
  tokenFile: string;
  gateway: RunningGateway;
  sessionDomain: string;
  cluster: Cluster;
}

export interface ConnectBed {
  fleet: Fleet;
  t: IdentityTestApi;
  plane: InternalListener;
  standin: RunningStandin;
  /** PEM of each gateway's self-signed certificate, by cluster name (clients trust exactly it). */
  ca: Record<string, string>;
  gpu: Record<"gpu-a" | "gpu-b", GpuSide>;
  superAdmin: TestUser;
  /** A session as the sessions domain leaves it once Running on `cluster`, with its pod made. */
  runningSession(o: { id: string; owner: TestUser; cluster: "gpu-a" | "gpu-b" }): Promise<{ id: string; cr: string }>;
  /** Pause: the pod goes, the phase says Paused. */
  pause(id: string): Promise<void>;
  /** A gateway for `cluster` whose control-plane address answers nothing (the plane unreachable). */
  isolatedGateway(cluster: "gpu-a" | "gpu-b", baseUrl: string): Promise<RunningGateway>;
  stop(): Promise<void>;
}

export async function startConnectBed(): Promise<ConnectBed> {
  const dir = mkdtempSync(join(tmpdir(), "berth-connect-"));
  const fleet = await startFleet(
    {
      clusters: [
        { name: "mgmt", kind: "management" },
        {
          name: "gpu-a",
          kind: "gpu",
          nodes: [{ name: "gpu-a-1", gpuModel: H100, gpuCount: 8 }],
          gpuRuntimeClass: true,
          gpuDevicePlugin: true,
        },
        {
          name: "gpu-b",
          kind: "gpu",
          nodes: [{ name: "gpu-b-1", gpuModel: L4, gpuCount: 4 }],
          gpuRuntimeClass: true,
          gpuDevicePlugin: true,
        },
      ],
    },
    { podLogLines: STANDIN_LOG_LINES },
  );
  const stops: Array<() => Promise<void>> = [
    async () => fleet.stop(),
    async () => rmSync(dir, { recursive: true, force: true }),
  ];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => {});
  };
  try {
    const mgmt = fleet.cluster("mgmt");
    const apiCredential = await prepareManagementCluster(mgmt);
    const t = await startIdentityTestApi();
    stops.push(() => t.stop());
    t.deps.clusters = await createClustersRuntime({
      clients: makeClusterClients(kubeConfigFrom(apiCredential.kubeconfig)),
      db: t.database.db,
      clock: { now: () => new Date() },
      log: t.deps.log,
      options: { probeTimeoutMs: 10_000 },
    });
    const plane = await startInternalListener(t.deps, {
      routes: domainInternalRoutes,
      allowCidrs: ["127.0.0.0/8"],
      host: "127.0.0.1",
      port: 0,
    });
    if (!plane) throw new Error("the internal plane did not open");
    stops.push(() => plane.close());
    const standin = await startStandin({ name: "the connect bed" });
    stops.push(() => standin.close());
    const superAdmin = await t.aUser({ superAdmin: true });
    // The sessions' organization: an owner reaches a session only as a member of it.
    const organization = await t.anOrganization("Connect");
    const members = new Set<string>();

    const ca: Record<string, string> = {};
    const gateways = new Map<string, { options: Parameters<typeof startGateway>[0] }>();
    const gpu = {} as Record<"gpu-a" | "gpu-b", GpuSide>;
    for (const name of ["gpu-a", "gpu-b"] as const) {
      const cluster = fleet.cluster(name);
      const cred = await mintControlPlaneCredential(cluster, { name: "berth-control-plane" });
      // A refusal throws the client's ApiError, which fails the bed's start.
      const reg = await bedApi({ t }, superAdmin).call("registerCluster", {
        body: {
          name,
          session_domain: `${name}.pending.invalid`,
          credential: { server: cluster.server, ca_data: cluster.caPem, token: cred.token },
        },
      });
      const clusterId = reg.cluster.id;
      const operatorToken = reg.operator_token.token;
      const tokenFile = join(dir, `operator-token-${name}`);
      writeFileSync(tokenFile, `${operatorToken}\n`, { mode: 0o600 });
      const tls = selfSignedCertificate({ names: ["127.0.0.1", "localhost"] });
      ca[name] = tls.certPem;
      // The stand-in answers for every session; the gate lets through only sessions whose pod runs.
      const upstreams = gatedUpstreams(
        new StaticUpstreams({ "*": `127.0.0.1:${standin.port}` }),
        kubePodRunning({
          server: cluster.server,
          caPem: cluster.caPem,
          token: cluster.adminToken,
          namespace: SESSIONS_NAMESPACE,
        }),
        { ttlMs: 200 },
      );
      const options = {
        clusterId,
        verifier: httpVerifier({ baseUrl: plane.url, tokenFile, timeoutMs: 3000 }),
        upstreams,
        tls,
        host: "127.0.0.1",
        port: 0,
        upstreamConnectTimeoutMs: 2000,
      };
      const gateway = await startGateway(options);
      gateways.set(name, { options });
      stops.push(() => gateway.close());
      const sessionDomain = `127.0.0.1:${gateway.port}`;
      await bedApi({ t }, superAdmin).call("updateCluster", {
        params: { clusterId },
        body: { session_domain: sessionDomain },
      });
      gpu[name] = { name, clusterId, operatorToken, tokenFile, gateway, sessionDomain, cluster };
    }

    return {
      fleet,
      t,
      plane,
      standin,
      ca,
      gpu,
      superAdmin,
      async runningSession({ id, owner, cluster }) {
        const cr = id.replace("_", "-");
        if (!members.has(owner.id)) {
          members.add(owner.id);
          await t.member(owner, organization.id, null, "member");
        }
        await t.database.db("sessions").insert({
          id,
          cr_name: cr,
          namespace: "org-connect",
          owner_id: owner.id,
          organization_id: organization.id,
          offering: cluster === "gpu-a" ? "h100" : "l4",
          preset: "small",
          image: "jupyterlab",
          gpu_model: cluster === "gpu-a" ? H100 : L4,
          gpu_count: 1,
          hourly_credit_rate: "100",
          cluster_id: gpu[cluster].clusterId,
          phase: "Running",
          started_at: new Date(),
        });
        const kube = adminKube(gpu[cluster].cluster);
        try {
          await kube.json("POST", `/api/v1/namespaces/${SESSIONS_NAMESPACE}/pods`, {
            apiVersion: "v1",
            kind: "Pod",
            metadata: {
              name: cr,
              namespace: SESSIONS_NAMESPACE,
              labels: { "app.kubernetes.io/name": "berth-session", "berth.dev/session": cr },
            },
            spec: {
              runtimeClassName: "nvidia",
              automountServiceAccountToken: false,
              containers: [
                { name: "session", image: "berth/standin:local", resources: { limits: { "nvidia.com/gpu": "1" } } },
              ],
            },
          });
          await eventually(
            async () =>
              (
                await kube.json<{ status?: { phase?: string } }>(
                  "GET",
                  `/api/v1/namespaces/${SESSIONS_NAMESPACE}/pods/${cr}`,
                )
              ).status?.phase === "Running",
            {
              what: `pod ${cr} Running`,
            },
          );
        } finally {
          kube.close();
        }
        return { id, cr };
      },
      async pause(id) {
        const row = await t.database.db("sessions").where({ id }).first();
        await t.database.db("sessions").where({ id }).update({ phase: "Paused", paused_at: new Date() });
        const name = Object.values(gpu).find((g) => g.clusterId === row.cluster_id)?.cluster;
        if (!name) return;
        const kube = adminKube(name);
        try {
          await kube.raw("DELETE", `/api/v1/namespaces/${SESSIONS_NAMESPACE}/pods/${row.cr_name}?gracePeriodSeconds=0`);
          await eventually(
            async () =>
              (await kube.raw("GET", `/api/v1/namespaces/${SESSIONS_NAMESPACE}/pods/${row.cr_name}`)).status === 404,
            { what: `pod ${row.cr_name} gone` },
          );
        } finally {
          kube.close();
        }
      },
      async isolatedGateway(cluster, baseUrl) {
        const base = gateways.get(cluster)?.options;
        if (!base) throw new Error(`no gateway for ${cluster}`);
        const g = await startGateway({
          ...base,
          verifier: httpVerifier({ baseUrl, tokenFile: gpu[cluster].tokenFile, timeoutMs: 1500 }),
        });
        stops.push(() => g.close());
        return g;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
