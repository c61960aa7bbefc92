// A super_admin registers GPU clusters: the control plane probes each one with the credential it was
// given (a least-privilege ServiceAccount) and accepts only a reachable cluster with the GPU runtime
// class, the GPU device plugin and the permissions Berth needs; then tests, changes, rotates and
// deregisters it. Everyone else is refused.

import { controlPlaneRbac } from "@berth/api/rbac";
import { applyInventory } from "@berth/api/testing";
import type { ApiClient, BodyOf } from "@berth/console/client";
import { ClusterKind, clusterResourceName } from "@berth/crds";
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { apiAs, bedApi, refusalOf } from "../api-client.ts";
import { kubeConfigFrom } from "../index.ts";
import { statusFrom } from "../testbed/waiting.test-support.ts";
import {
  adminKube,
  type ClustersBed,
  closedPort,
  mintControlPlaneCredential,
  silentServer,
  startClustersBed,
} from "./harness.ts";

const PROBE_TIMEOUT_MS = 3_000;
const H100 = "NVIDIA-H100-80GB-HBM3";

let bed: ClustersBed;
let mgmtCustom: CustomObjectsApi;
let mgmtCore: CoreV1Api;

beforeAll(async () => {
  bed = await startClustersBed(
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
        { name: "no-runtime", kind: "gpu", gpuRuntimeClass: false, gpuDevicePlugin: true },
        { name: "no-plugin", kind: "gpu", gpuRuntimeClass: true, gpuDevicePlugin: false },
      ],
    },
    { options: { probeTimeoutMs: PROBE_TIMEOUT_MS } },
  );
  const kc = kubeConfigFrom(bed.fleet.cluster("mgmt").kubeconfig);
  mgmtCustom = kc.makeApiClient(CustomObjectsApi);
  mgmtCore = kc.makeApiClient(CoreV1Api);
});

afterAll(async () => {
  await bed?.stop();
});

const G = { group: ClusterKind.group, version: ClusterKind.version, plural: ClusterKind.plural };
const admin = () => bedApi(bed, bed.superAdmin);
const asUser = () => bedApi(bed, bed.user);

function register(
  name: string,
  credential: BodyOf<"registerCluster">["credential"],
  sessionDomain = `${name}.sessions.localhost`,
) {
  return admin().call("registerCluster", { body: { name, session_domain: sessionDomain, credential } });
}

async function liveRows(name: string) {
  return bed.t.database.db("clusters").where({ name }).whereNull("deregistered_at");
}

describe("registering a GPU cluster", () => {
  let registered: { id: string; token: string; saToken: string };

  it("accepts a GPU cluster probed with a least-privilege credential and answers its operator token once", async () => {
    const credential = await bed.credentialFor("gpu-a");
    const res = await register("gpu-a", credential, "gpu-a.sessions.localhost:8443");
    const { cluster, operator_token } = res;
    expect(cluster).toMatchObject({
      name: "gpu-a",
      session_domain: "gpu-a.sessions.localhost:8443",
      status: "connected",
      checks: { reachable: true, gpu_runtime_class: true, gpu_device_plugin: true, credential_permissions: true },
      deregistered_at: null,
    });
    expect(cluster.id).toMatch(/^clu_[a-z0-9]{16}$/);
    expect(operator_token).toMatchObject({ token_type: "Bearer", expires_in: 604_800, kid: bed.runtime.tokens.kid });
    expect(operator_token.token.split(".")).toHaveLength(3);
    expect(cluster.operator_token).toEqual({
      kid: operator_token.kid,
      issued_at: expect.any(String),
      expires_at: expect.any(String),
    });
    // The credential went in and never comes out.
    expect(JSON.stringify(res)).not.toContain(credential.token);
    registered = { id: cluster.id, token: operator_token.token, saToken: credential.token };

    // The Cluster resource, the credential Secret and the history row.
    const cr = (await mgmtCustom.getClusterCustomObject({ ...G, name: clusterResourceName(cluster.id) })) as {
      spec: {
        id: string;
        displayName: string;
        sessionDomain: string;
        credentialSecretRef: { namespace: string; name: string };
      };
      status: { probe: { status: string; checks: Record<string, boolean> }; operatorToken: { kid: string } };
    };
    expect(cr.spec).toMatchObject({
      id: cluster.id,
      displayName: "gpu-a",
      sessionDomain: "gpu-a.sessions.localhost:8443",
    });
    expect(cr.status.probe).toMatchObject({
      status: "connected",
      checks: { reachable: true, gpu_runtime_class: true },
    });
    expect(cr.status.operatorToken.kid).toBe(operator_token.kid);
    expect(cr.spec.credentialSecretRef.namespace).toBe("berth-system");
    const secret = await mgmtCore.readNamespacedSecret({
      name: cr.spec.credentialSecretRef.name,
      namespace: "berth-system",
    });
    expect(Buffer.from(secret.data?.kubeconfig ?? "", "base64").toString()).toContain(credential.token);
    expect(await liveRows("gpu-a")).toHaveLength(1);
  });

  it("never returns the credential from a read", async () => {
    const one = await admin().call("getCluster", { params: { clusterId: registered.id } });
    const list = await admin().call("listClusters");
    for (const body of [one, list]) {
      const text = JSON.stringify(body);
      expect(text).not.toContain(registered.saToken);
      expect(text).not.toContain("kubeconfig");
      expect(text).not.toContain(registered.token);
    }
    expect(list.data.map((c) => c.id)).toContain(registered.id);
  });

  it("refuses a second cluster under a name that is registered", async () => {
    const res = await refusalOf(register("gpu-a", await bed.credentialFor("gpu-a")));
    expect(res.status).toBe(409);
    expect(res.code).toBe("already_exists");
  });

  it("accepts a kubeconfig credential, and refuses one that would run a program", async () => {
    const cred = await mintControlPlaneCredential(bed.fleet.cluster("gpu-a"), { name: "berth-by-kubeconfig" });
    const ok = await register("gpu-a-by-kubeconfig", { kubeconfig: cred.kubeconfig });
    expect(ok.cluster.status).toBe("connected");

    const doc = parseYaml(cred.kubeconfig) as { users: { user: Record<string, unknown> }[] };
    const user = doc.users[0]?.user ?? {};
    delete user.token;
    user.exec = { apiVersion: "client.authentication.k8s.io/v1", command: "/bin/sh", args: ["-c", "touch /tmp/pwned"] };
    const bad = await refusalOf(register("gpu-a-exec", { kubeconfig: stringifyYaml(doc) }));
    expect(bad.status).toBe(400);
    expect(bad.code).toBe("validation_failed");
    expect((bad.details.issues as { path: unknown }[])[0]?.path).toEqual(["body", "credential", "kubeconfig"]);
    expect(bad.message).toContain("user.exec is not accepted");
    expect(await liveRows("gpu-a-exec")).toHaveLength(0);
  });

  it("refuses a cluster without the GPU runtime class, with every check in the details", async () => {
    const res = await refusalOf(register("no-runtime", await bed.credentialFor("no-runtime")));
    expect(res.status).toBe(422);
    expect(res.code).toBe("gpu_runtime_class_missing");
    expect(res.details.checks).toEqual({
      reachable: true,
      gpu_runtime_class: false,
      gpu_device_plugin: true,
      credential_permissions: true,
    });
    expect(await liveRows("no-runtime")).toHaveLength(0);
  });

  it("refuses a cluster without the GPU device plugin", async () => {
    const res = await refusalOf(register("no-plugin", await bed.credentialFor("no-plugin")));
    expect(res.status).toBe(422);
    expect(res.code).toBe("gpu_device_plugin_missing");
    expect(res.details.checks).toEqual({
      reachable: true,
      gpu_runtime_class: true,
      gpu_device_plugin: false,
      credential_permissions: true,
    });
    expect(await liveRows("no-plugin")).toHaveLength(0);
  });

  it("refuses a credential that lacks a permission Berth needs, and names the permission", async () => {
    const rbac = controlPlaneRbac();
    const sessions = rbac.namespaceRules[0];
    if (!sessions) throw new Error("no session namespace rules");
    const withoutEviction = {
      ...rbac,
      namespaceRules: [
        { ...sessions, rules: sessions.rules.filter((r) => !r.resources.includes("pods/eviction")) },
        ...rbac.namespaceRules.slice(1),
      ],
    };
    const res = await refusalOf(
      register("gpu-a-weak", await bed.credentialFor("gpu-a", { name: "berth-weak", rbac: withoutEviction })),
    );
    expect(res.status).toBe(422);
    expect(res.code).toBe("cluster_credential_insufficient");
    expect(res.details.missing_permissions).toEqual(["create pods/eviction in berth-sessions"]);
    expect(res.details.checks).toMatchObject({ credential_permissions: false });
  });

  it("refuses a credential the cluster does not accept", async () => {
    const c = bed.fleet.cluster("gpu-a");
    const res = await refusalOf(
      register("gpu-a-bad-token", { server: c.server, ca_data: c.caPem, token: "not-a-token-of-this-cluster" }),
    );
    expect(res.status).toBe(422);
    expect(res.code).toBe("cluster_credential_invalid");
    expect(res.details.checks).toMatchObject({ reachable: true });
  });

  it("refuses an address that refuses connections, at once", async () => {
    const port = await closedPort();
    const res = await refusalOf(
      register("closed", {
        server: `https://127.0.0.1:${port}`,
        ca_data: bed.fleet.cluster("gpu-a").caPem,
        token: "x",
      }),
    );
    expect(res.status).toBe(422);
    expect(res.code).toBe("cluster_unreachable");
    // ECONNREFUSED, not TIMEOUT: it did not wait out the probe (no stopwatch: a loaded machine is slow).
    expect(res.details.error).toMatchObject({ reason: "ECONNREFUSED" });
    expect(res.details.checks).toEqual({
      reachable: false,
      gpu_runtime_class: false,
      gpu_device_plugin: false,
      credential_permissions: false,
    });
  });

  it("gives up on an address that never answers when the configured timeout passes", async () => {
    const silent = await silentServer();
    try {
      const started = Date.now();
      const res = await refusalOf(
        register("silent", {
          server: `https://127.0.0.1:${silent.port}`,
          ca_data: bed.fleet.cluster("gpu-a").caPem,
          token: "x",
        }),
      );
      const elapsed = Date.now() - started;
      expect(res.status).toBe(422);
      expect(res.code).toBe("cluster_unreachable");
      expect(res.details.error).toMatchObject({ reason: "TIMEOUT" });
      expect(elapsed).toBeGreaterThanOrEqual(PROBE_TIMEOUT_MS - 50);
      expect(elapsed).toBeLessThan(PROBE_TIMEOUT_MS + 30_000); // the configured timeout, far below the default 120 s
    } finally {
      await silent.close();
    }
  });
});

describe("a registered cluster", () => {
  let id: string;
  beforeAll(async () => {
    id = (await register("gpu-a-admin", await bed.credentialFor("gpu-a"))).cluster.id;
  });

  it("passes the connection test with a boolean per check, and reports what broke when a check fails", async () => {
    const connectionTest = () => admin().call("testClusterConnection", { params: { clusterId: id }, body: {} });
    // Answered means 200, the route's one success status in the contract.
    const ok = await connectionTest();
    expect(ok).toMatchObject({
      status: "connected",
      checks: { reachable: true, gpu_runtime_class: true, gpu_device_plugin: true, credential_permissions: true },
    });
    expect(ok.server_version).toMatch(/^v1\./);

    const kube = adminKube(bed.fleet.cluster("gpu-a"));
    const rc = await kube.json<Record<string, unknown>>("GET", "/apis/node.k8s.io/v1/runtimeclasses/nvidia");
    await kube.json("DELETE", "/apis/node.k8s.io/v1/runtimeclasses/nvidia");
    try {
      const degraded = await connectionTest();
      expect(degraded.status).toBe("degraded");
      expect(degraded.checks.gpu_runtime_class).toBe(false);
      expect(degraded.message).toContain("RuntimeClass");
      const cr = (await mgmtCustom.getClusterCustomObject({ ...G, name: clusterResourceName(id) })) as {
        status: { probe: { status: string }; conditions: { type: string; status: string; reason: string }[] };
      };
      expect(cr.status.probe.status).toBe("degraded");
      expect(cr.status.conditions.find((c) => c.type === "Accepted")).toMatchObject({
        status: "False",
        reason: "GpuRuntimeClassMissing",
      });
    } finally {
      await kube.json("POST", "/apis/node.k8s.io/v1/runtimeclasses", {
        apiVersion: "node.k8s.io/v1",
        kind: "RuntimeClass",
        metadata: { name: "nvidia" },
        handler: rc.handler,
      });
      kube.close();
    }
    expect((await connectionTest()).status).toBe("connected");
  });

  it("takes a new session_domain (hostname[:port]) and refuses anything else", async () => {
    const update = (body: BodyOf<"updateCluster">) =>
      admin().call("updateCluster", { params: { clusterId: id }, body });
    const ok = await update({ session_domain: "Sessions.GPU-A.example.com:9443" });
    expect(ok.session_domain).toBe("sessions.gpu-a.example.com:9443");
    const cr = (await mgmtCustom.getClusterCustomObject({ ...G, name: clusterResourceName(id) })) as {
      spec: { sessionDomain: string };
    };
    expect(cr.spec.sessionDomain).toBe("sessions.gpu-a.example.com:9443");
    for (const bad of ["https://a.example.com", "a.example.com/path", "a.example.com:70000", "-a.example.com", ""]) {
      const res = await refusalOf(update({ session_domain: bad }));
      expect(res.status, bad).toBe(400);
      expect(res.code).toBe("validation_failed");
    }
    // A field the contract does not take, on purpose: the API's own check answers it.
    const name = await refusalOf(update({ name: "renamed" } as unknown as BodyOf<"updateCluster">));
    expect(name.status).toBe(400);
  });

  it("rotates its operator token: a new one, recorded on the resource", async () => {
    const before = (await bed.t.database.db("clusters").where({ id }).first()).operator_token_jti;
    bed.tokenClock.advance(5);
    const res = await admin().call("rotateClusterOperatorToken", { params: { clusterId: id } });
    expect(res).toMatchObject({ token_type: "Bearer", expires_in: 604_800 });
    const claims = await bed.runtime.tokens.verify(res.token);
    expect(claims.clusterId).toBe(id);
    const after = (await bed.t.database.db("clusters").where({ id }).first()).operator_token_jti;
    expect(after).toBe(claims.jti);
    expect(after).not.toBe(before);
    const cr = (await mgmtCustom.getClusterCustomObject({ ...G, name: clusterResourceName(id) })) as {
      status: { operatorToken: { issuedAt: string } };
    };
    expect(cr.status.operatorToken.issuedAt).toBe(`${res.issued_at.slice(0, 19)}Z`);
  });

  it("is not deregistered while work lives on it; then its resource, credential, nodes and devices go and its history stays", async () => {
    await applyInventory(bed.t.deps, id, new Date(), [
      {
        name: "gpu-a-1",
        gpu_model: H100,
        gpu_count: 8,
        gpu_allocatable: 8,
        gpu_in_use: 0,
        labels: {},
        schedulable: true,
        ready: true,
        devices: [{ index: 0 }, { index: 1 }],
      },
    ]);
    bed.liveWork.add(id);
    const deregister = () => admin().call("deregisterCluster", { params: { clusterId: id } });
    const refused = await refusalOf(deregister());
    expect(refused.status).toBe(409);
    expect(refused.code).toBe("cluster_in_use");
    expect(await statusFrom(() => mgmtCustom.getClusterCustomObject({ ...G, name: clusterResourceName(id) }))).toBe(
      200,
    );
    expect(await bed.t.database.db("cluster_nodes").where({ cluster_id: id })).toHaveLength(1);

    bed.liveWork.delete(id);
    const cr = (await mgmtCustom.getClusterCustomObject({ ...G, name: clusterResourceName(id) })) as {
      spec: { credentialSecretRef: { name: string } };
    };
    const res = await deregister();
    expect(res).toMatchObject({ id, removed: { nodes: 1, gpu_devices: 2 } });
    expect(await statusFrom(() => mgmtCustom.getClusterCustomObject({ ...G, name: clusterResourceName(id) }))).toBe(
      404,
    );
    expect(
      await statusFrom(() =>
        mgmtCore.readNamespacedSecret({ name: cr.spec.credentialSecretRef.name, namespace: "berth-system" }),
      ),
    ).toBe(404);
    expect(await bed.t.database.db("cluster_nodes").where({ cluster_id: id })).toHaveLength(0);
    expect(await bed.t.database.db("gpu_devices").where({ cluster_id: id })).toHaveLength(0);
    const row = await bed.t.database.db("clusters").where({ id }).first();
    expect(row.deregistered_at).toBeInstanceOf(Date);

    expect((await refusalOf(asUser().call("getCluster", { params: { clusterId: id } }))).status).toBe(404);
    const history = await admin().call("getCluster", { params: { clusterId: id } });
    expect(history).toMatchObject({ id, status: "deregistered" });
    const live = await admin().call("listClusters", { query: { size: 100 } });
    expect(live.data.map((c) => c.id)).not.toContain(id);
    const all = await admin().call("listClusters", { query: { size: 100, include_deregistered: "true" } });
    expect(all.data.map((c) => c.id)).toContain(id);
    expect((await refusalOf(deregister())).status).toBe(404);
  });

  it("gets a new id when its name is registered again", async () => {
    const res = await register("gpu-a-admin", await bed.credentialFor("gpu-a"));
    expect(res.cluster.id).not.toBe(id);
  });
});

describe("who may do what", () => {
  let id: string;
  beforeAll(async () => {
    id = (await register("gpu-a-roles", await bed.credentialFor("gpu-a"))).cluster.id;
  });

  /** Each change, by its operation id, as the given client asks for it. */
  const mutations = (): [string, (api: ApiClient) => Promise<unknown>][] => {
    const clusterId = id;
    const node = { clusterId, nodeName: "gpu-a-1" };
    const credential = { server: "https://127.0.0.1:1", token: "x" };
    return [
      [
        "registerCluster",
        (api) => api.call("registerCluster", { body: { name: "x", session_domain: "x.example.com", credential } }),
      ],
      ["testClusterConnection", (api) => api.call("testClusterConnection", { params: { clusterId }, body: {} })],
      [
        "updateCluster",
        (api) => api.call("updateCluster", { params: { clusterId }, body: { session_domain: "y.example.com" } }),
      ],
      ["deregisterCluster", (api) => api.call("deregisterCluster", { params: { clusterId } })],
      ["rotateClusterOperatorToken", (api) => api.call("rotateClusterOperatorToken", { params: { clusterId } })],
      ["cordonNode", (api) => api.call("cordonNode", { params: node, body: {} })],
      ["uncordonNode", (api) => api.call("uncordonNode", { params: node, body: {} })],
      ["drainNode", (api) => api.call("drainNode", { params: node, body: {} })],
      ["deleteNode", (api) => api.call("deleteNode", { params: node })],
    ];
  };
  const reads = (): [string, (api: ApiClient) => Promise<unknown>][] => [
    ["listClusters", (api) => api.call("listClusters")],
    ["getCluster", (api) => api.call("getCluster", { params: { clusterId: id } })],
    ["listNodes", (api) => api.call("listNodes")],
    ["listGpuDevices", (api) => api.call("listGpuDevices")],
    ["listNodePools", (api) => api.call("listNodePools")],
  ];

  it("refuses every change to a user who is not super_admin, and changes nothing", async () => {
    for (const [op, call] of mutations()) {
      const res = await refusalOf(call(asUser()));
      expect(res.status, op).toBe(403);
      expect(res.code).toBe("forbidden");
    }
    const row = await bed.t.database.db("clusters").where({ id }).first();
    expect(row).toMatchObject({ deregistered_at: null, session_domain: "gpu-a-roles.sessions.localhost" });
  });

  it("shows a user the clusters without probe or token details, and no nodes or devices (not their scope)", async () => {
    await applyInventory(bed.t.deps, id, new Date(), [
      {
        name: "gpu-a-1",
        gpu_model: H100,
        gpu_count: 8,
        gpu_allocatable: 8,
        gpu_in_use: 2,
        labels: {},
        schedulable: true,
        ready: true,
        devices: [{ index: 0 }],
      },
    ]);
    const one = await asUser().call("getCluster", { params: { clusterId: id } });
    expect(one).not.toHaveProperty("checks");
    expect(one).not.toHaveProperty("operator_token");
    const nodes = await asUser().call("listNodes", { query: { cluster: id } });
    expect(nodes).toEqual({ data: [], pagination: { page: 1, size: 20, total: 0 } });
    const devices = await asUser().call("listGpuDevices");
    expect(devices.pagination.total).toBe(0);
    const pools = await asUser().call("listNodePools", { query: { cluster: id } });
    expect(pools.data).toEqual([
      {
        cluster_id: id,
        gpu_model: H100,
        nodes: 1,
        ready_nodes: 1,
        schedulable_nodes: 1,
        gpu_count: 8,
        gpu_allocatable: 8,
        gpu_in_use: 2,
        gpu_free: 6,
      },
    ]);
    const adminNodes = await admin().call("listNodes", { query: { cluster: id } });
    expect(adminNodes.pagination.total).toBe(1);
  });

  it("answers 401 token_expired to an expired token on every route", async () => {
    const expired = await bed.t.expiredTokenFor(bed.superAdmin.id);
    for (const [op, call] of [...mutations(), ...reads()]) {
      const res = await refusalOf(call(apiAs(bed.t.api.url, expired)));
      expect(res.status, op).toBe(401);
      expect(res.code).toBe("token_expired");
    }
  });
});
